"""The HTTP client of the verifier service, used by the CLI, the runners and the agent's side: it
retries what may be retried and trusts nothing it is served."""
