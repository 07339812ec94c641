"""Frontend: source retrieval, parsing, lowering to IR."""
