"""Whether the registries an engine is fetched from answer: a quick, bounded probe, so that a
fetch is tried only where it can succeed and a machine without a network says so in seconds
instead of hanging on Maven's or pip's retries."""

from __future__ import annotations

import os
import urllib.error
import urllib.request

MAVEN_CENTRAL = "https://repo1.maven.org/maven2/"
PYPI = "https://pypi.org/simple/"
PROBE_SECONDS = 5.0


def registries() -> dict[str, str]:
    """The registries a fetch uses, by name: Maven Central (the delta jars) and pip's index
    (``PIP_INDEX_URL``, else PyPI: pyspark and delta-spark's wheel)."""
    return {"Maven Central": MAVEN_CENTRAL, "PyPI": os.environ.get("PIP_INDEX_URL") or PYPI}


def unreachable(timeout: float = PROBE_SECONDS) -> str | None:
    """Why a fetch cannot work here (the first registry that does not answer within
    ``timeout`` seconds), or None when every one answers (any HTTP status is an answer)."""
    for name, url in registries().items():
        try:
            with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"),
                                        timeout=timeout):  # fmt: skip
                pass
        except urllib.error.HTTPError:
            continue
        except (OSError, ValueError) as error:
            reason = getattr(error, "reason", error)
            return f"{name} ({url}) did not answer within {timeout:g} s: {reason}"
    return None
