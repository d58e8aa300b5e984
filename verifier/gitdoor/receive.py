"""The pre-receive hook: refuse direct pushes; land a person's push to refs/for/main.

git runs it in the bare repository with the pushed objects in a quarantine directory and the
ref updates on stdin (`<old> <new> <ref>` per line). Every update of another ref is refused with a
message saying how people contribute. For refs/for/main the pusher must be a person, named by the
push option `token=<bearer>` (`git push -o token=... origin HEAD:refs/for/main`, on any transport) or
by RW_PUSH_TOKEN (set by the service for a push over HTTP with `Authorization: Bearer`), a token
that authenticates now (not revoked or expired) and may push to this project (scope `steward`, the
project among its projects); a refusal says how to push in the form for the transport the push
came over (RW_PUSH_TRANSPORT=http from the service, else a local path). Their commits then go through
pipeline.push (the pushed objects read apart from the writer, so what lands is written to the
main object store before the branch moves), and every verdict is printed on their terminal (git
prefixes it `remote:`). Exit 0 lets git take the push (its update of refs/for/main then goes to
the proc-receive hook, which creates no ref); exit 1 refuses it, and git discards the quarantine.
A push that made a hypothesis active then seals its baseline (writes.followups), or records and
prints why it could not.

git starts this module at every push, so it imports only what a landing needs: the sealing
machinery is loaded only when the landed tree has a hypothesis file (`seal_landed`), and opening
the home loads no text extractor.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from verifier.errors import AuthError, VerifierError
from verifier.pipeline.writer import ProjectWriter
from verifier.state.layout import HYPOTHESES_DIR
from verifier.store.audit import record_denial
from verifier.store.home import Home
from verifier.store.identities import Actor, require
from verifier.wiring import open_home
from verifier.writes.push import PUSH_REF, PushedObjects, land_push

ZERO = "0" * 40
# How a person pushes, by the transport the push came over (the service sets RW_PUSH_TRANSPORT=http).
PUSH_FORM = {
    "local": f"`git push -o token=$RW_TOKEN origin HEAD:{PUSH_REF}` (or run `rw git setup` once in the clone, "
             f"then `git push origin HEAD:{PUSH_REF}`)",
    "http": f"`rw git setup` once in the clone (it keeps your token in the clone's http.extraHeader), then "
            f"`git push origin HEAD:{PUSH_REF}`; or `git push -o token=$RW_TOKEN origin HEAD:{PUSH_REF}`",
}


def how(env: Mapping[str, str]) -> str:
    """How a person pushes, in the form for the transport in use."""
    form = PUSH_FORM["http" if env.get("RW_PUSH_TRANSPORT") == "http" else "local"]
    return (f"people push their commits to {PUSH_REF} with their token: {form}; agents submit a patch with "
            "its trace (`rw submit`)")


def direct(env: Mapping[str, str]) -> str:
    """What the pusher of any other ref is told."""
    said = how(env)
    return ("direct pushes are refused: the verifier is the only writer of this repository. "
            f"{said[0].upper()}{said[1:]}.")


def push_token(env: Mapping[str, str]) -> str:
    """The pusher's token: RW_PUSH_TOKEN (the service), else the push option `token=`."""
    if env.get("RW_PUSH_TOKEN"):
        return env["RW_PUSH_TOKEN"]
    count = int(env.get("GIT_PUSH_OPTION_COUNT", "0") or "0")
    for number in range(min(count, 64)):
        option = env.get(f"GIT_PUSH_OPTION_{number}", "")
        if option.startswith("token="):
            return option[len("token="):]
    return ""


def _updates(lines: list[str]) -> list[tuple[str, str, str]]:
    updates = []
    for line in lines:
        parts = line.split()
        if len(parts) == 3:
            updates.append((parts[0], parts[1], parts[2]))
    return updates


def _pusher(home: Home, env: Mapping[str, str], slug: str, out: TextIO, now: datetime) -> Actor | None:
    """The person pushing, if their token authenticates now and may push to `slug`; else None, said on `out`."""
    token = push_token(env)
    try:
        if not token:  # said as the push's own fault: RW_TOKEN alone does not reach a git push
            raise AuthError("the push carried no token", code="no_token")
        actor = home.identities.authenticate(token, now)
        if actor.type == "human":
            require(actor, "steward", slug)
    except AuthError as exc:  # ScopeError too: a token not made for pushing to this project
        if not env.get("RW_PUSH_TOKEN"):  # the service already recorded a refused header token
            record_denial(home, kind="authentication", who="unknown", action="git push", project=slug,
                          why=f"[{exc.code}] {exc}", at=now, door="git")
        print(f"REFUSED: [{exc.code}] {exc}; {how(env)}", file=out)
        return None
    if actor.type != "human":
        print(f"REFUSED: {actor.handle} is an agent; agents submit patches with traces (`rw submit`)", file=out)
        return None
    return actor


def run(home: Home, repo_path: Path, lines: list[str], env: Mapping[str, str], out: TextIO, now: datetime) -> int:
    updates = _updates(lines)
    others = [ref for _, _, ref in updates if ref != PUSH_REF]
    if others or not updates:
        print(f"REFUSED {', '.join(others) or '(nothing)'}: {direct(env)}", file=out)
        return 1
    (_, new, _), *rest = updates
    if rest or new == ZERO:
        print(f"REFUSED: push one series of commits to {PUSH_REF}", file=out)
        return 1
    slug = repo_path.name[:-4] if repo_path.name.endswith(".git") else repo_path.name
    actor = _pusher(home, env, slug, out, now)
    if actor is None:
        return 1
    # The pushed objects wait in git's quarantine until this hook says yes: they are read through a
    # repository of their own, never the writer's, so what lands is written to the main store.
    pushed = PushedObjects(repo_path, env.get("GIT_QUARANTINE_PATH"))
    with ProjectWriter.open(home, slug) as writer:
        assert writer.tip is not None
        commits = pushed.commits(new, writer.tip)
        if not commits:
            print("REFUSED: nothing new to land: the branch already has these commits", file=out)
            return 1
        ok, verdicts = land_push(home, writer, pushed, actor, push_token(env), commits, now)
    for verdict in verdicts:
        print(verdict.line(), file=out)
        for said in verdict.notes:
            print(f"  note: {said}", file=out)
    if ok:
        print(f"{len(verdicts)} commit(s) landed on main; `git pull --rebase` (or fetch and reset) to get them",
              file=out)
        sealed, note = seal_landed(home, slug, now, remote=env.get("RW_PUSH_TRANSPORT") == "http")
        if sealed:
            print(f"sealed baseline for {', '.join(sealed)}", file=out)
        if note:
            print(f"note: {note}", file=out)
    return 0 if ok else 1


def seal_landed(home: Home, slug: str, now: datetime, *, remote: bool = False) -> tuple[list[str], str | None]:
    """Seal what the landing left waiting (writes.followups); nothing when the project has no
    hypothesis file at all, which is known from the tree's names without loading the sealing
    machinery (the Resolver's keys, the model adapters: a tenth of the hook's start-up)."""
    repo = home.project(slug)
    if not any(name.endswith(".md") for name in repo.view(repo.tip()).list_dir(HYPOTHESES_DIR)):
        return [], None  # what seal_after_landing answers for a project without hypotheses
    from verifier.writes.followups import seal_after_landing  # noqa: PLC0415 - start-up cost, see above

    try:
        return seal_after_landing(home, slug, now=now, remote=remote)
    except VerifierError as exc:  # the push has landed: a sealing failure never refuses it
        return [], f"baselines not sealed: {exc.code if remote else exc}; run `rw seal {slug}`"


def main() -> int:
    out = sys.stderr
    try:
        home = open_home()
        return run(home, Path.cwd(), sys.stdin.read().splitlines(), os.environ, out,
                   datetime.now(UTC).replace(microsecond=0))
    except VerifierError as exc:  # a broken history, a full disk, an unknown project: said in one line
        print(f"REFUSED: {exc}", file=out)
    except Exception as exc:  # a crash refuses the push with one line; nothing landed
        print(f"REFUSED: the verifier crashed on this push ({type(exc).__name__}: {exc}); nothing landed", file=out)
    return 1


if __name__ == "__main__":
    sys.exit(main())
