"""Code generation: IR to Python source, naming, compiling."""
