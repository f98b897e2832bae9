"""Schemathesis hooks for scripts/schemathesis: the rules of the protocol that JSON Schema cannot state.

openapi.json states them in prose; here a generated request that the schema allows but these rules
refuse is made to follow them before it is sent, so `positive_data_acceptance` tests what the
document promises. Requests meant to break the schema are left alone.
"""

import schemathesis

MAXIMUM_BYTES = 256
INT64_MAX = 2**63 - 1


def _fit(text, limit=MAXIMUM_BYTES):
    """`text` cut to at most `limit` bytes of UTF-8, at a character boundary, and at least one."""
    if not isinstance(text, str) or len(text.encode("utf-8")) <= limit:
        return text
    encoded = text.encode("utf-8")[:limit]
    cut = encoded.decode("utf-8", errors="ignore")
    return cut or "x"


def _integer(value):
    """`value` as an int when JSON Schema counts it as an integer (`3` or `3.0`), else `None`."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


@schemathesis.hook
def before_call(context, case, kwargs):
    meta = case.meta
    positive = meta is not None and meta.generation.mode.is_positive
    # A held pull lasts up to `wait` seconds (60 at most): keep the run short, the value still valid.
    if case.operation.path == "/v1/pull" and isinstance(case.query, dict):
        wait = _integer(case.query.get("wait"))
        if wait is not None and wait > 1:
            case.query["wait"] = 1
    if not positive or case.operation.path != "/v1/push" or not isinstance(case.body, dict):
        return
    body = case.body
    # `clientID` and `id` are counted in bytes of UTF-8, not in characters.
    body["clientID"] = _fit(body.get("clientID"))
    # Protocol integers are written without fraction or exponent (`1`, not `1.0`).
    cursor = body.get("cursor")
    if isinstance(cursor, float) and cursor.is_integer():
        body["cursor"] = int(cursor)
    mutations = body.get("mutations")
    if not isinstance(mutations, list):
        return
    mutations = [mutation for mutation in mutations if isinstance(mutation, dict)]
    for mutation in mutations:
        mutation["id"] = _fit(mutation.get("id"))
        # Protocol integers are written without fraction or exponent (`1`, not `1.0`).
        for key in ("mutationID", "baseVersion"):
            value = mutation.get(key)
            if isinstance(value, float) and value.is_integer():
                mutation[key] = int(value)
    # `mutationID`s increase within a request: number them from the first one when they do not.
    identifiers = [_integer(mutation.get("mutationID")) for mutation in mutations]
    if all(i is not None for i in identifiers):
        if any(later <= earlier for earlier, later in zip(identifiers, identifiers[1:])):
            first = min(identifiers[0], INT64_MAX - len(identifiers) + 1)
            for offset, mutation in enumerate(mutations):
                mutation["mutationID"] = first + offset
