# The Python function the benchmark deploys.
def hello(body, req):
    name = req.query.get('name') or (body or {}).get('name') or 'World'
    return 'Hello %s!' % name[::-1]
