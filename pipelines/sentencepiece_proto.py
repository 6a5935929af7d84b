"""`sentencepiece_model_pb2` (SentencePiece's `ModelProto`), importable beside apache-beam.

sentencepiece 0.2.3's generated code was made with protobuf 7 and refuses an older runtime at
import (a gencode/runtime version check), while apache-beam (the `beam` extra) caps protobuf
below 7. The generated descriptor itself loads and works with protobuf 6 (tested: the release
model parses and re-serializes the same), so when, and only when, that check fails, the import
is retried once with protobuf's documented switch `TEMPORARILY_DISABLE_PROTOBUF_VERSION_CHECK`
set, then the environment is restored. An older sentencepiece would avoid the check but trains
a different `nmt_nfkc` character map than ALBERT's release vocabulary.
"""

from __future__ import annotations

import os

_SWITCH = "TEMPORARILY_DISABLE_PROTOBUF_VERSION_CHECK"

try:
    from sentencepiece import sentencepiece_model_pb2
except ImportError:
    raise
except Exception as error:  # google.protobuf.runtime_version.VersionError
    if type(error).__name__ != "VersionError":
        raise
    previous = os.environ.get(_SWITCH)
    os.environ[_SWITCH] = "true"
    try:
        from sentencepiece import sentencepiece_model_pb2
    finally:
        if previous is None:
            del os.environ[_SWITCH]
        else:
            os.environ[_SWITCH] = previous

__all__ = ["sentencepiece_model_pb2"]
