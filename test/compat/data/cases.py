# Dates and time zones, data classes, validation, tokens, command lines, versions.


def case_dateutil_parse(ctx):
    from dateutil import parser
    from dateutil.relativedelta import relativedelta
    when = parser.parse('Tue, 5 Mar 2024 14:30:00 +0100')
    later = when + relativedelta(months=+1, days=-3, hours=+2)
    return [when.isoformat(), later.isoformat(), parser.parse('2024-02-29').strftime('%A')]


def case_dateutil_rrule(ctx):
    from datetime import datetime
    from dateutil.rrule import MO, WEEKLY, rrule
    return [d.isoformat() for d in rrule(WEEKLY, count=4, byweekday=MO, dtstart=datetime(2024, 1, 3))]


def case_dateutil_tz(ctx):
    from datetime import datetime
    from dateutil import tz
    paris = tz.gettz('Europe/Paris')
    assert paris is not None, 'no Europe/Paris'
    return [datetime(2024, 7, 1, 12, tzinfo=paris).utcoffset().total_seconds(), datetime(2024, 12, 1, 12, tzinfo=paris).tzname()]


def case_pytz_localize(ctx):
    from datetime import datetime, timedelta
    import pytz
    eastern = pytz.timezone('US/Eastern')
    local = eastern.localize(datetime(2024, 3, 10, 1, 30))
    return [local.isoformat(), local.astimezone(pytz.utc).isoformat(), eastern.normalize(local + timedelta(hours=1)).tzname()]


def case_attrs_classes(ctx):
    import attr

    @attr.s(frozen=True)
    class Point(object):
        x = attr.ib(validator=attr.validators.instance_of(int))
        y = attr.ib(default=0)

    p = Point(1, 2)
    try:
        Point('a')
        refused = False
    except TypeError:
        refused = True
    return [repr(p), attr.asdict(attr.evolve(p, y=5)), refused]


def case_jsonschema_validate(ctx):
    import jsonschema
    schema = {'type': 'object', 'properties': {'age': {'type': 'integer', 'minimum': 0}, 'name': {'type': 'string'}}, 'required': ['name']}
    jsonschema.validate({'name': 'Ada', 'age': 36}, schema)
    errors = sorted(e.message for e in jsonschema.Draft7Validator(schema).iter_errors({'age': -1}))
    return errors


def case_jwt_roundtrip(ctx):
    import jwt
    token = jwt.encode({'sub': 'ada', 'admin': True, 'iat': 1700000000}, 'secret', algorithm='HS256')
    try:
        jwt.decode(token, 'wrong', algorithms=['HS256'])
        rejected = False
    except jwt.InvalidSignatureError:
        rejected = True
    return [token, jwt.decode(token, 'secret', algorithms=['HS256']), rejected]


def case_click_runner(ctx):
    import click
    from click.testing import CliRunner

    @click.command()
    @click.option('--count', default=1, type=int)
    @click.argument('name')
    def hello(count, name):
        for _ in range(count):
            click.echo('Hello %s!' % name)

    result = CliRunner().invoke(hello, ['--count', '2', 'Ada'])
    bad = CliRunner().invoke(hello, ['--count', 'x', 'Ada'])
    return [result.exit_code, result.output, bad.exit_code]


def case_packaging_versions(ctx):
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version
    versions = sorted(['1.10.0', '1.2.0', '1.2.0rc1', '2.0.0.dev1'], key=Version)
    return [versions, [v for v in versions if v in SpecifierSet('>=1.2,<2')]]
