"""Is this readout.json the one langchef published? What `langchef gate` checks before it
reads a single number.

Three proofs, from weakest to strongest, each refused with one sentence when it fails:

1. **The manifest** beside the readout holds the readout's SHA-256. Anyone who can write the
   file can write both, so it only catches an accident; a missing manifest is a refusal.
2. **The ledger**, when the gate can see the readout's workspace (the folder holding
   ``reports/<experiment>/v<N>/``, or ``--workspace``): its ``publications`` row for this
   version must hold the file's hash, and the manifest's chain head and ledger identity must
   be this ledger's. Rewriting both files no longer passes; the ledger is append-only and
   hash-chained (``designs/ledger.py``), and an older or foreign one is refused on opening.
3. **The signature** (``readout/signing.py``), for a readout carried away from its
   workspace: the manifest is signed with the operator's key, which the workspace never holds.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ..inputs.errors import InputError
from ..stats.records import Record
from .signing import SIGNING_KEY_VARIABLE, key_id, signature_problem

MAX_MANIFEST_BYTES = 1 << 20
_HINT = "published readouts are never edited; take the readout again with `langchef readout`"


@dataclass(frozen=True)
class Verification(Record):
    """Which proofs a readout passed: the manifest always; ``ledger`` names the ledger it was
    found in, ``signature`` the id of the key that signed it (None: not checked)."""

    manifest: str
    ledger: str | None
    signature: str | None

    @property
    def proven(self) -> bool:
        """Checked against something the workspace's writers cannot rewrite at will."""
        return self.ledger is not None or self.signature is not None

    @property
    def sentence(self) -> str:
        proofs = [f"the ledger {self.ledger}"] if self.ledger else []
        if self.signature:
            proofs.append(f"the signature of key {self.signature}")
        if proofs:
            return "verified against " + " and ".join(proofs)
        return ("checked against its manifest only (no ledger or signing key in reach: pass "
                "--workspace, or --verify-key with LANGCHEF_SIGNING_KEY set)")


def read_manifest(readout_path: Path, body: bytes, *, file: str | None = None) -> dict:
    """The manifest beside the readout, once its SHA-256 of readout.json matches ``body``."""
    path = Path(readout_path).with_name("manifest.json")
    label = file or str(path)
    if not path.is_file():
        raise InputError("has no manifest.json beside it, so nothing shows it is the readout "
                         "langchef published", file=str(readout_path),
                         hint="gate the version folder `langchef readout` wrote "
                              "(reports/NAME/vN/), with its manifest.json")
    try:
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise InputError("is larger than 1 MiB; not a langchef manifest", file=label)
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise InputError(f"cannot be read as JSON ({type(error).__name__}: {error})", file=label,
                         hint=_HINT) from None
    files = manifest.get("files") if isinstance(manifest, dict) else None
    expected = files.get("readout.json") if isinstance(files, dict) else None
    if not isinstance(expected, str):
        raise InputError("has no SHA-256 of readout.json", file=label, column="files.readout.json",
                         hint=_HINT)
    if hashlib.sha256(body).hexdigest() != expected:
        raise InputError("its SHA-256 of readout.json does not match the file beside it: the "
                         "readout was changed after it was published", file=label,
                         column="files.readout.json", hint=_HINT)
    return manifest


def check_signature(manifest: dict, key: bytes | None, *, file: str) -> str:
    """The key id, once ``manifest`` is shown signed by ``key``."""
    if key is None:
        raise InputError(f"cannot be verified: {SIGNING_KEY_VARIABLE} is not set", file=file,
                         hint=f"set {SIGNING_KEY_VARIABLE} to the key the publisher signed with")
    problem = signature_problem(manifest, key)
    if problem is not None:
        raise InputError(problem, file=file, hint="gate the readout as it was published; a "
                                                  "manifest that fails its signature is no "
                                                  "evidence")
    return key_id(key)


def check_in_ledger(ledger, readout: dict, manifest: dict, body: bytes, readout_path: Path, *,
                    reports: Path, file: str) -> str:
    """Where the ledger is, once its publication row of this version holds ``body``'s hash
    and the manifest's head and identity are the ledger's. A readout inside ``reports`` must
    also lie in its own version's folder (an older, genuine version copied over a newer one
    would otherwise pass as it)."""
    def refuse(message):
        raise InputError(message, file=file, hint=_HINT)

    experiment, version = readout.get("experiment"), readout.get("version")
    if not isinstance(experiment, str) or isinstance(version, bool) or \
            not isinstance(version, int):
        refuse("names no experiment and version, so the ledger cannot be asked about it")
    folder = Path(readout_path).resolve().parent
    inside = folder.is_relative_to(Path(reports).resolve())
    if inside and (folder.name != f"v{version}" or folder.parent.name != experiment):
        refuse(f"says it is {experiment!r} v{version} but lies in {folder.parent.name}/"
               f"{folder.name}: a version is never moved or renamed")
    identity = ledger.identity()
    published_under = manifest.get("ledger_identity")
    if identity is not None and published_under is not None and \
            published_under != identity.workspace_id:
        refuse(f"was published under ledger {str(published_under)[:12]}, not under this "
               f"workspace's ledger ({identity.workspace_id[:12]}), so the ledger cannot vouch "
               "for it")
    digest = hashlib.sha256(body).hexdigest()
    recorded = ledger.publication_hashes(experiment, int(version))
    if not recorded:
        refuse(f"the ledger {ledger.path} holds no publication of {experiment} v{version}")
    if digest not in recorded:
        refuse(f"the ledger {ledger.path} recorded another readout as {experiment} v{version} "
               f"(SHA-256 {sorted(recorded)[0][:12]}…, this file {digest[:12]}…): the readout "
               "and its manifest were rewritten after publishing")
    head = manifest.get("ledger_head")
    if head is not None and ledger.link_position(head) is None:
        refuse(f"the manifest's chain head {str(head)[:12]} is not in the ledger {ledger.path}")
    return str(ledger.path)
