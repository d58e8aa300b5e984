"""Put a project's branch on a git host: push it there once (the host must not have the branch
yet, or have exactly ours), then name the host in config.json, so every later landing of the
writer is a compare-and-swap push to it (verifier.pipeline.writer, docs/deploy.md). The home it
was given is rewired at once: its writers publish through the host from the next landing on."""

from __future__ import annotations

from dataclasses import replace

from verifier.deploy.publishing import publish, pushed_path, pushing_path, write_record
from verifier.errors import ConflictError
from verifier.pipeline.writer import ProjectWriter
from verifier.store.home import Home
from verifier.store.remote import push_branch, remote_tip


def attach_remote(home: Home, slug: str, url: str) -> str:
    """Push the project's branch to `url` and record it as the project's host; returns the tip."""
    with ProjectWriter.open(home, slug) as writer:
        tip = writer.tip
        if tip is None:
            raise ConflictError(f"project {slug} has no commits to push")
        there = remote_tip(writer.repo.path, url)
        if there is None:
            push_branch(writer.repo.path, url, tip, None, slug=slug)
        elif there != tip:
            raise ConflictError(f"the git host {url} already has a main branch ({there[:12]}), not this "
                                f"project's ({tip[:12]}); give an empty repository")
        # A new host: what an earlier one was pushed to says nothing of it.
        write_record(home, pushing_path(home, slug), None)
        write_record(home, pushed_path(home, slug), None)
        backends = home.settings.backends
        remotes = {**backends.remotes, slug: url}
        home.save_settings(home.settings.model_copy(update={"backends": backends.model_copy(
            update={"remotes": remotes})}))
        home.deployment = replace(home.deployment, publish_staged=publish, hosted=home.deployment.hosted | {slug})
        return tip
