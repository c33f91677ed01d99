# Localisation with babel (its CLDR locale data is about 30 MB of the folder).


def case_babel_dates(ctx):
    from datetime import datetime
    from babel.dates import format_date, format_datetime
    when = datetime(2024, 7, 14, 15, 30)
    return [format_date(when, format='full', locale='fr_FR'), format_date(when, locale='ja_JP'), format_datetime(when, 'medium', tzinfo='Europe/Berlin', locale='de_DE')]


def case_babel_numbers(ctx):
    from babel.numbers import format_currency, format_decimal, parse_decimal
    return [format_currency(1234.5, 'EUR', locale='de_DE'), format_decimal(1234567.891, locale='en_IN'), str(parse_decimal('1.234,5', locale='de'))]
