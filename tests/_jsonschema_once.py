"""Check each JSON schema against its metaschema once per process, for the SageMaker SDKs' tests.

Both SDKs (v2 ``sagemaker.config.config``, v3 ``sagemaker.core.config.config_manager``) validate
their defaults config on every config lookup with ``jsonschema.validate``, which first checks the
constant schema itself against the JSON Schema metaschema: ~0.2 s a call, 200 calls in the v2
matrix (42 of test_sagemaker_sdk.py's 55 s) and over 100 in the v3 harness (26 of its 36 s;
cProfile, 2026-12-04). With this, a schema is checked against the metaschema the first time it
is seen; every config is still validated against it on every call, and a bad config raises what
``jsonschema.validate`` raises (its best match). Imported by the v3 harness inside .venv-sdkv3
too: no import of ours here.
"""

from __future__ import annotations

from typing import Any, Callable


def checking_each_schema_once(jsonschema: Any) -> Callable[..., None]:
    """A drop-in for ``jsonschema.validate`` (the module is passed in: each venv has its own)."""
    original = jsonschema.validate
    checked: set[int] = set()

    def validate(instance: Any, schema: Any, cls: Any = None, *args: Any, **kwargs: Any) -> None:
        if id(schema) not in checked:
            original(instance, schema, cls, *args, **kwargs)
            checked.add(id(schema))
            return
        validator = (cls or jsonschema.validators.validator_for(schema))(schema, *args, **kwargs)
        error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            raise error

    return validate
