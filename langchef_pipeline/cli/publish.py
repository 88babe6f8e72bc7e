"""`langchef publish --to DEST`: the reports as a static site in a folder or an object store,
version folders immutable, a manifest of hashes, links that work from any host."""

from __future__ import annotations

from .options import add_command, open_workspace
from .output import emit

DESCRIPTION = """
    Copy the reports (the index, every version, and each experiment's latest) to DEST, a
    folder or an fsspec URL (s3://, gs://, az://; credentials from the environment the
    storage library reads, e.g. AWS_ACCESS_KEY_ID). A version already there is never
    rewritten: identical files are skipped, and a version that differs is refused before
    anything is written. Each file is written whole and new versions go first, so the index
    never links to a missing page. DEST/manifest.json records every file's SHA-256."""
EXAMPLES = ("langchef publish --to site",
            "langchef publish --to s3://team-evals/reports",
            "langchef publish --to gs://team-evals/pr-42 --reports build/reports")


def register(commands, common) -> None:
    publish = add_command(commands, "publish", common, help="publish the reports as a site",
                          description=DESCRIPTION, examples=EXAMPLES)
    publish.add_argument("--to", required=True, metavar="DEST", dest="destination",
                         help="a folder, or a URL such as s3://bucket/prefix")
    publish.add_argument("--reports", metavar="DIR",
                         help="the reports to publish (default: WORKSPACE/reports)")
    publish.set_defaults(handler=run_publish)


def run_publish(arguments) -> int:
    from langchef_core.review.destination import publish_site

    workspace = open_workspace(arguments, reports=arguments.reports)
    published = publish_site(workspace.reports, arguments.destination)
    if published.written:
        text = (f"published {len(published.written)} file"
                + ("" if len(published.written) == 1 else "s")
                + f" to {published.destination} ({published.unchanged} already there)")
        text += "".join(f"\n  wrote {path}" for path in published.written)
    else:
        text = (f"nothing to publish: {published.destination} already holds these "
                f"{published.unchanged} files")
    emit(arguments, published.to_dict(), text)
    return 0
