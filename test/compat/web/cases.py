# HTTP clients: a vendored requests (with urllib3, idna, certifi, charset_normalizer), and the
# standard library's urllib.request and http.client. `ctx` names a function to call over HTTP.
# Socket timeouts are 30 s: the called server also takes the CLI's deploys meanwhile, and the
# CPython control's reads passed 5 s at a load of 15 on 2 cores.
import json


def _url(ctx):
    return '%s/v2/run/%s/%s' % (ctx['base'], ctx['account'], ctx['callee'])


def case_requests_get(ctx):
    import requests
    r = requests.get(_url(ctx), params={'name': 'get'}, headers={'X-Service-Api-Key': ctx['key']}, timeout=30)
    assert r.ok
    return [r.status_code, r.json(), r.headers['Content-Type'], len(r.headers['X-Service-Request-ID'])]


def case_requests_post_json(ctx):
    import requests
    r = requests.post(_url(ctx), json={'name': 'posted'}, headers={'X-Service-Api-Key': ctx['key']}, timeout=30)
    return [r.status_code, r.json(), r.request.headers['Content-Type']]


def case_requests_session(ctx):
    import requests
    with requests.Session() as session:
        session.headers['X-Service-Api-Key'] = ctx['key']
        return [session.get(_url(ctx), params={'name': n}).json() for n in ('one', 'two', 'three')]


def case_requests_errors(ctx):
    import requests
    r = requests.get(_url(ctx), timeout=30)
    try:
        r.raise_for_status()
        raised = None
    except requests.HTTPError as exc:
        raised = type(exc).__name__
    return [r.status_code, r.json()['errorCode'], raised]


def case_urllib_get(ctx):
    import urllib.request
    request = urllib.request.Request(_url(ctx) + '?name=urllib', headers={'X-Service-Api-Key': ctx['key']})
    with urllib.request.urlopen(request, timeout=30) as response:
        return [response.status, json.loads(response.read()), response.headers.get_content_type()]


def case_urllib_post(ctx):
    import urllib.request
    data = json.dumps({'name': 'urlpost'}).encode()
    request = urllib.request.Request(_url(ctx), data=data, method='POST', headers={'X-Service-Api-Key': ctx['key'], 'Content-Type': 'application/json'})
    with urllib.request.urlopen(request, timeout=30) as response:
        return [response.status, json.loads(response.read())]


def case_urllib_http_error(ctx):
    import urllib.error
    import urllib.request
    try:
        urllib.request.urlopen(_url(ctx), timeout=30)
    except urllib.error.HTTPError as err:
        return [err.code, json.loads(err.read())['errorCode']]
    raise AssertionError('no HTTPError')


def case_http_client(ctx):
    import http.client
    from urllib.parse import urlsplit
    parts = urlsplit(ctx['base'])
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    out = []
    for name in ('a', 'b'):
        conn.request('GET', '/v2/run/%s/%s?name=%s' % (ctx['account'], ctx['callee'], name), headers={'X-Service-Api-Key': ctx['key']})
        response = conn.getresponse()
        out.append([response.status, response.reason, response.getheader('content-type'), json.loads(response.read())])
    conn.close()
    return out


def case_idna_charset(ctx):
    import charset_normalizer
    import idna
    text = 'Ça coûte 10 € à Zürich, naïve façade, déjà vu. ' * 4
    best = charset_normalizer.from_bytes(text.encode('utf-8')).best()
    return [idna.encode('bücher.example').decode(), idna.decode('xn--bcher-kva.example'), str(best)[:20]]
