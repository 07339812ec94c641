"""The `# line N` comments of generated code point at user code, wherever it lives."""

import importlib.util
import sys
import textwrap

import numpy as np

import s2sad
from s2sad.codegen.emit import _is_compiler_file

USER = """
import numpy as np


def loss(w, x):
    h = np.tanh(x * w)
    return np.sum(h * h)
"""


def _import(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_user_code_in_a_folder_named_s2sad_keeps_its_line_comments(tmp_path):
    # a checkout's default name is s2sad: its user files are not compiler files
    for folder in (tmp_path / "s2sad", tmp_path / "s2sad" / "s2sad_rules" / "s2sad"):
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "user.py"
        path.write_text(textwrap.dedent(USER))
        assert not _is_compiler_file(str(path))
        name = f"user_in_s2sad_{abs(hash(str(folder))):x}"
        module = _import(path, name)
        try:
            df = s2sad.grad(module.loss)
            g = df(np.ones(3), np.arange(3.0))
            assert g.shape == (3,)
            assert "# line 6: h = np.tanh(x * w)" in df.source
            assert "# line 7: return np.sum(h * h)" in df.source
        finally:
            del sys.modules[name]


def test_the_compiler_and_the_rules_are_compiler_files():
    import s2sad_rules
    import s2sad_rules.operators
    from s2sad.ir import prims

    for module in (s2sad_rules, s2sad_rules.operators, prims):
        assert _is_compiler_file(module.__file__)


def test_the_bundled_examples_are_user_code():
    from s2sad.examples import seeds

    assert not _is_compiler_file(seeds.__file__)
