"""The repository's files as strict models: what each file holds and how it is spelled. Pure."""
