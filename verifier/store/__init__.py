"""The edges: git through pygit2, the verifier home on disk, identities, traces, the fetcher."""
