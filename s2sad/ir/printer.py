"""A compact textual form of the IR (`s2sad show --ir`)."""

from __future__ import annotations

from s2sad.ir.nodes import Block, Call, Const, ForRange, Function, If, Var, While
from s2sad.ir.prims import callee_name as _callee


def _atom(a) -> str:
    if isinstance(a, Var):
        return a.name
    if isinstance(a, Const):
        return repr(a)
    return str(a)


def format_function(fn: Function) -> str:
    params = ", ".join(p.name for p in fn.params)
    kw = ", ".join(f"{v.name}={d!r}" for v, d in fn.kwonly)
    head = f"func {fn.name}({params}{'; ' + kw if kw else ''})"
    lines = [head + " {"]
    _block(fn.body, 1, lines)
    lines.append("}")
    return "\n".join(lines)


def _block(b: Block, depth: int, lines: list):
    pad = "  " * depth
    for s in b.stmts:
        match s:
            case Call(target=t, fn=fn, args=args, kwargs=kw):
                ops = [_atom(a) for a in args] + [f"{n}={_atom(a)}" for n, a in kw]
                lines.append(f"{pad}{t.name} = {_callee(fn)}({', '.join(ops)})")
            case If(cond=c, then=then, orelse=orelse, outputs=outs):
                lines.append(f"{pad}{', '.join(o.name for o in outs) or '_'} = if {_atom(c)} {{")
                _block(then, depth + 1, lines)
                lines.append(f"{pad}}} else {{")
                _block(orelse, depth + 1, lines)
                lines.append(f"{pad}}}")
            case ForRange(index=i, start=a, stop=b2, step=st, params=ps, inits=inits, body=body,
                          outputs=outs):
                carried = ", ".join(f"{p.name}={_atom(x)}" for p, x in zip(ps, inits))
                rev = "reversed " if s.reverse else ""
                what = f"{rev}range({_atom(a)}, {_atom(b2)}, {_atom(st)})" if s.over is None \
                    else f"items of {s.over.name}"
                lines.append(f"{pad}{', '.join(o.name for o in outs) or '_'} = for {i.name} in "
                             f"{what} carry({carried}) {{")
                _block(body, depth + 1, lines)
                lines.append(f"{pad}}}")
            case While(params=ps, inits=inits, cond=cond, body=body, outputs=outs):
                carried = ", ".join(f"{p.name}={_atom(x)}" for p, x in zip(ps, inits))
                lines.append(f"{pad}{', '.join(o.name for o in outs) or '_'} = while "
                             f"carry({carried}) {{")
                _block(cond, depth + 1, lines)
                lines.append(f"{pad}}} do {{")
                _block(body, depth + 1, lines)
                lines.append(f"{pad}}}")
    if b.results:
        lines.append(f"{pad}yield {', '.join(_atom(r) for r in b.results)}")
