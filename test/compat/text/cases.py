# Templates, markup and text formats.


def case_jinja2_render(ctx):
    import jinja2
    env = jinja2.Environment(autoescape=True)
    template = env.from_string('<ul>{% for item in items %}<li>{{ item.name|title }}: {{ item.price|round(1) }}</li>{% endfor %}</ul>{{ note }}')
    return template.render(items=[{'name': 'apple pie', 'price': 3.14159}, {'name': 'tea', 'price': 2}], note='<b>&</b>')


def case_markupsafe_escape(ctx):
    from markupsafe import Markup, escape
    return [str(escape('<script>"x" & \'y\'</script>')), str(Markup('<em>%s</em>') % '<b>')]


def case_yaml_roundtrip(ctx):
    import yaml
    doc = yaml.safe_load('name: islet\nitems:\n  - 1\n  - two\n  - {nested: true, when: 2024-01-02}\n')
    doc['items'][2]['when'] = doc['items'][2]['when'].isoformat()
    return [doc, yaml.safe_dump(doc, sort_keys=True)]


def case_markdown_html(ctx):
    import markdown
    return markdown.markdown('# Title\n\nSome *emphasis* and `code`.\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n', extensions=['markdown.extensions.tables'])


def case_bs4_select(ctx):
    from bs4 import BeautifulSoup
    soup = BeautifulSoup('<html><body><div class="x"><a href="/1">One</a><a href="/2" class="y">Two</a></div><p>Tail &amp; end</p></body></html>', 'html.parser')
    return [[a['href'] for a in soup.find_all('a')], soup.select_one('div.x a.y').text, soup.p.get_text()]


def case_pygments_highlight(ctx):
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer
    return highlight('def f(x):\n    return x + 1\n', PythonLexer(), HtmlFormatter(nowrap=True))


def case_tabulate_table(ctx):
    from tabulate import tabulate
    return tabulate([['alpha', 1, 2.5], ['beta', 10, 0.25]], headers=['name', 'n', 'ratio'], tablefmt='github')


def case_toml_parse(ctx):
    import toml
    doc = toml.loads('title = "x"\n[owner]\nname = "Ada"\nscores = [1, 2, 3]\n[db]\nenabled = true\n')
    return [doc, toml.dumps({'a': {'b': [1, 2]}})]


def case_simplejson_decimal(ctx):
    from decimal import Decimal
    import simplejson
    text = simplejson.dumps({'price': Decimal('10.10'), 'list': [1, 2]}, use_decimal=True, sort_keys=True)
    back = simplejson.loads(text, use_decimal=True)
    return [text, str(back['price'])]
