# The standard library a function expects.
import json


async def case_asyncio_gather(ctx):
    import asyncio

    async def square(n):
        await asyncio.sleep(0.01 * n)
        return n * n
    task = asyncio.create_task(square(4))
    values = await asyncio.gather(*(square(n) for n in range(4)))
    try:
        await asyncio.wait_for(asyncio.sleep(5), timeout=0.02)
        waited = 'finished'
    except asyncio.TimeoutError:
        waited = 'timed out'
    return [values, await task, waited]


def case_hashlib_kdf(ctx):
    import hashlib
    return [hashlib.pbkdf2_hmac('sha256', b'password', b'salt', 100000).hex(), hashlib.scrypt(b'pw', salt=b'salt', n=16384, r=8, p=1, dklen=32).hex(),
            hashlib.sha3_256(b'x').hexdigest(), hashlib.blake2b(b'x', digest_size=16).hexdigest()]


def case_zoneinfo_convert(ctx):
    from datetime import datetime
    from zoneinfo import ZoneInfo
    meeting = datetime(2024, 10, 27, 9, 0, tzinfo=ZoneInfo('America/Los_Angeles'))
    return [meeting.astimezone(ZoneInfo(z)).isoformat() for z in ('Europe/Paris', 'Asia/Kolkata', 'Australia/Sydney')]


def case_sqlite3_query(ctx):
    import sqlite3
    db = sqlite3.connect(':memory:')
    db.execute('create table t (name text, n integer)')
    db.executemany('insert into t values (?, ?)', [('a', 1), ('b', 2), ('a', 3)])
    return db.execute('select name, sum(n), count(*) from t group by name order by name').fetchall()


def case_zlib_gzip(ctx):
    import bz2
    import gzip
    import lzma
    import zlib
    data = ('islet ' * 1000).encode()
    packed = zlib.compress(data, 9)
    return [len(packed) < 100, zlib.decompress(packed) == data, gzip.decompress(gzip.compress(data)) == data,
            bz2.decompress(bz2.compress(data)) == data, lzma.decompress(lzma.compress(data)) == data, zlib.crc32(data)]


def case_decimal_fractions(ctx):
    from decimal import ROUND_HALF_UP, Decimal, getcontext
    from fractions import Fraction
    import statistics
    getcontext().prec = 30
    return [str(Decimal(1) / Decimal(7)), str(Decimal('2.675').quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)),
            str(Fraction(3, 4) + Fraction(1, 6)), statistics.median([3, 1, 4, 1, 5, 9, 2]), round(statistics.stdev([2, 4, 4, 4, 5, 5, 7, 9]), 6)]


def case_email_mime(ctx):
    from email import message_from_bytes, policy
    from email.message import EmailMessage
    msg = EmailMessage()
    msg['From'] = 'Ada <ada@example.com>'
    msg['To'] = 'Bob <bob@example.com>'
    msg['Subject'] = 'Réunion ☕'
    msg.set_content('Hello Bob,\nsee attached.\n')
    msg.add_attachment(b'\x00\x01data', maintype='application', subtype='octet-stream', filename='data.bin')
    parsed = message_from_bytes(msg.as_bytes(), policy=policy.default)
    parts = [p.get_content_type() for p in parsed.walk()]
    return [str(parsed['Subject']), parts, parsed.get_body(('plain',)).get_content()]


def case_csv_roundtrip(ctx):
    import csv
    import io
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=['name', 'note'])
    writer.writeheader()
    writer.writerows([{'name': 'Ada', 'note': 'says "hi", twice'}, {'name': 'Bob', 'note': 'line\nbreak'}])
    return [out.getvalue(), list(csv.DictReader(io.StringIO(out.getvalue())))]


def case_json_re_text(ctx):
    import re
    import textwrap
    import unicodedata
    text = 'Ünïcödé naïve café 123 and 456'
    return [json.dumps({'k': text}, ensure_ascii=True), re.findall(r'\b\w+é\b', text), sum(map(int, re.findall(r'\d+', text))),
            unicodedata.normalize('NFD', 'é') == 'e\u0301', textwrap.wrap('The quick brown fox jumps over the lazy dog', 12)]


def case_datetime_struct(ctx):
    import base64
    import struct
    import uuid
    from datetime import date, datetime, timedelta, timezone
    when = datetime(2024, 2, 28, 23, 0, tzinfo=timezone.utc) + timedelta(hours=2)
    packed = struct.pack('>IhQ', 1, -2, 3)
    return [when.isoformat(), date(2024, 12, 31).isocalendar()[1], base64.b64encode(packed).decode(), struct.unpack('>IhQ', packed),
            str(uuid.uuid5(uuid.NAMESPACE_URL, 'https://example.com/'))]


def case_xml_html(ctx):
    import html
    import xml.etree.ElementTree as ET
    from html.parser import HTMLParser
    root = ET.fromstring('<feed><entry id="1"><title>One</title></entry><entry id="2"><title>Two &amp; more</title></entry></feed>')
    titles = [e.findtext('title') for e in root.iter('entry')]
    ET.SubElement(root, 'entry', id='3').text = 'new'

    class Links(HTMLParser):
        found = []

        def handle_starttag(self, tag, attrs):
            if tag == 'a':
                self.found.append(dict(attrs)['href'])
    parser = Links()
    parser.feed('<p><a href="/x">x</a> <a href="/y">y</a></p>')
    return [titles, ET.tostring(root[-1]).decode(), parser.found, html.escape('<a & b>')]


def case_ssl_context(ctx):
    import ssl
    context = ssl.create_default_context()
    return [context.check_hostname, context.verify_mode == ssl.CERT_REQUIRED, ssl.PROTOCOL_TLS_CLIENT > 0, hasattr(ssl, 'SSLSocket')]


def case_thread_pool(ctx):
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda n: n * n, range(5)))
