# The compatibility suite's function: every group folder deploys this file with its cases.py and
# packages; ?case=<name> runs cases.case_<name>(body). control.py runs the same cases under CPython.
import inspect

import cases


async def handler(body, req):
    result = getattr(cases, 'case_' + req.query['case'])(body)
    if inspect.isawaitable(result):
        result = await result
    return result
