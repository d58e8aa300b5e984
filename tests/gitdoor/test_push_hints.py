"""The hook's refusals say how to push in the form for the transport the push came over: the
service marks its pushes RW_PUSH_TRANSPORT=http; anything else is a path (file://, ssh-like)."""

from __future__ import annotations

from verifier.gitdoor.receive import direct, how


def test_a_refusal_over_http_suggests_rw_git_setup_and_a_local_one_the_token_option() -> None:
    over_http, local = how({"RW_PUSH_TRANSPORT": "http"}), how({})
    assert over_http.index("`rw git setup`") < over_http.index("-o token=")  # the header form first
    assert local.index("`git push -o token=$RW_TOKEN origin HEAD:refs/for/main`") < local.index("rw git setup")


def test_a_direct_push_is_told_where_people_push() -> None:
    said = direct({"RW_PUSH_TRANSPORT": "http"})
    assert said.startswith("direct pushes are refused") and "HEAD:refs/for/main" in said
