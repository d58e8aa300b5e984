"""Beyond one machine (docs/deploy.md): instances and their leases, placing and spreading projects,
a project's git host and the group push that publishes to it, forwarding a write to the instance
that holds the project. A door: the writer only calls the seams `verifier.wiring` hands it."""
