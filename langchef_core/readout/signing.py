"""Signed manifests, for a readout carried away from its workspace.

Inside the workspace, `langchef gate` checks a readout against the ledger. A CI artifact or
a published site has no ledger beside it, and its manifest.json is a file anyone can rewrite
together with the readout. So an operator may hold a key, ``LANGCHEF_SIGNING_KEY`` (in the
environment of the machine that publishes and of the one that gates; never in a design or the
workspace): publishing then signs every manifest with HMAC-SHA256 over its canonical JSON,
and ``langchef gate --verify-key`` refuses a manifest whose signature does not match.

HMAC is the standard library's: one shared secret fits a team whose publisher and CI are
run by the same operator. It proves the manifest (and, through its hashes, the readout and
page) was written by someone holding the key; nothing more.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os

from ..inputs.errors import InputError

SIGNING_KEY_VARIABLE = "LANGCHEF_SIGNING_KEY"
MIN_KEY_CHARACTERS = 32
ALGORITHM = "hmac-sha256"


def signing_key() -> bytes | None:
    """The operator's key from the environment, or None when none is set."""
    text = os.environ.get(SIGNING_KEY_VARIABLE, "")
    if not text:
        return None
    if len(text) < MIN_KEY_CHARACTERS:
        raise InputError(f"{SIGNING_KEY_VARIABLE} is {len(text)} characters long; a signing key "
                         f"needs at least {MIN_KEY_CHARACTERS}",
                         hint="make one with `python -c 'import secrets; "
                              "print(secrets.token_hex(32))'` and keep it out of the workspace")
    return text.encode("utf-8")


def canonical(manifest: dict) -> bytes:
    """The bytes a signature covers: the manifest without its signature, keys sorted."""
    unsigned = {key: value for key, value in manifest.items() if key != "signature"}
    return json.dumps(unsigned, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def key_id(key: bytes) -> str:
    """A short name of the key that reveals nothing of it (which key signed, for messages)."""
    return hmac.new(key, b"langchef signing key id", hashlib.sha256).hexdigest()[:16]


def signed(manifest: dict, key: bytes | None) -> dict:
    """``manifest`` with its signature, or as it is without a key."""
    if key is None:
        return manifest
    value = hmac.new(key, canonical(manifest), hashlib.sha256).hexdigest()
    return {**manifest, "signature": {"algorithm": ALGORITHM, "key_id": key_id(key),
                                      "value": value}}


def signature_problem(manifest: dict, key: bytes) -> str | None:
    """Why ``manifest`` is not signed by ``key``, or None when it is."""
    signature = manifest.get("signature")
    if not isinstance(signature, dict):
        return "is not signed (it was published without LANGCHEF_SIGNING_KEY)"
    if signature.get("algorithm") != ALGORITHM:
        return f"is signed with {signature.get('algorithm')!r}, not {ALGORITHM}"
    if signature.get("key_id") != key_id(key):
        return (f"was signed with another key (key id {signature.get('key_id')!r}; this one's "
                f"is {key_id(key)!r})")
    expected = hmac.new(key, canonical(manifest), hashlib.sha256).hexdigest()
    if not isinstance(signature.get("value"), str) or \
            not hmac.compare_digest(signature["value"], expected):
        return "has a signature that does not match its content: it was changed after signing"
    return None
