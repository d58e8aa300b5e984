"""Messages from landings (design §6, §9): the pure triggers that turn ledger rows into messages,
the notifier that posts them to the Commons exactly once, and the outbox every command drains."""
