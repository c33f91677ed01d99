# The control: runs a group's cases under the machine's CPython, from a folder laid out as for
# islet (the function's files and its packages), and prints {case: {"ok", "value" | "error"}}.
#   python3 control.py <folder> <context json> <case>...
import asyncio
import inspect
import json
import os
import sys

folder, context = sys.argv[1], json.loads(sys.argv[2])
sys.path.insert(0, folder)
os.chdir(folder)
import cases  # noqa: E402

results = {}
for name in sys.argv[3:]:
    try:
        value = getattr(cases, 'case_' + name)(dict(context))
        if inspect.isawaitable(value):
            value = asyncio.run(value)
        results[name] = {'ok': True, 'value': json.loads(json.dumps(value))}
    except BaseException as exc:  # noqa: B902 - a case may fail any way
        results[name] = {'ok': False, 'error': '%s: %s' % (type(exc).__name__, exc)}
print(json.dumps(results))
