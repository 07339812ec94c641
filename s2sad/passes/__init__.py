"""IR-to-IR passes: activity, forward, reverse, simplify."""
