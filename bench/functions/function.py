# The Python function the benchmark deploys.
def hello(body, req):
    name = req.query.get('name') or (body or {}).get('name') or 'World'
    return 'Hello %s!' % name[::-1]


def caller_http(body, req):
    """The seed caller in Python: node8's hello through the HTTP endpoint, as caller_fetch does with fetch."""
    import os
    import urllib.parse
    import urllib.request
    name = req.query.get('name') or (body or {}).get('name') or 'World'
    url = '%s/v2/run/%s/hello?name=%s' % (os.environ['SERVICE_URL'], os.environ['SERVICE_ACCOUNT_ID'], urllib.parse.quote(name))
    request = urllib.request.Request(url, method='POST', headers={'X-Service-Api-Key': os.environ['SERVICE_API_KEY'], 'Content-Type': 'application/json'})
    with urllib.request.urlopen(request) as response:
        return response.read().decode()
