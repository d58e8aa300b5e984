"""The other writes beside a submission, each "decide, then land" through the one writer: holds,
reverts, repairs, people's pushes, baselines and their follow-ups, projects and leaf creation."""
