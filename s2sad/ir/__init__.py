"""The IR: nodes, kinds, builder, printer, verifier."""
