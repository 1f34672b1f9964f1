"""A home's cache folders: one per kind and commit (`<kind>-<generation>-<commit>`).

A replica's lexical index, entry records and retriever's tables, and the vector copy of a small embedded
index (`exact_vectors`, named by a digest of its content), are each written to a temporary folder
beside their place and renamed into it, so a process killed while writing leaves the folder whole or
absent; the same kind's folders of other generations (and temporaries a killed writer left) are then
removed. One writer for all of them keeps the naming the home's cleanup relies on in one place.
"""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

# a cache folder as `ServerStore` names it, or the temporary one it is written under
GENERATION_FOLDER = re.compile(r"(?P<kind>[a-z]+)-[0-9]+-[0-9a-z]{1,12}(\.[0-9a-f]{8}\.tmp)?")


def replace_folder(folder: Path, write: Callable[[Path], None]) -> None:
    """Write `folder` with `write` (given an empty folder to fill) under a temporary name, rename it into
    place and remove the other folders of its kind. Raises OSError, leaving nothing behind, when the home
    cannot be written."""
    temporary = folder.with_name(f"{folder.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        temporary.mkdir(parents=True)
        write(temporary)
        shutil.rmtree(folder, ignore_errors=True)
        temporary.rename(folder)
    except OSError:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    kind = folder.name.split("-", 1)[0]
    for old in folder.parent.iterdir():
        match = GENERATION_FOLDER.fullmatch(old.name)
        if match is not None and match["kind"] == kind and old != folder:
            shutil.rmtree(old, ignore_errors=True)
