"""Rules for numpy.linalg: inv solve det slogdet cholesky eig eigh eigvalsh svd svdvals qr pinv
norm vector_norm matrix_power.

Matrices may be stacked (leading batch axes). Conventions:
- `cholesky`, `eigh`, `eigvalsh` differentiate the function NumPy computes: it reads one
  triangle (the lower one; the upper one for UPLO="U") and the real part of the diagonal,
  and factors the Hermitian matrix they make. The other triangle has derivative 0, and each
  off-diagonal entry read counts once (the tangent of the matrix factored is
  tril(dA, -1) + tril(dA, -1)^H + Re diag(dA)); the cotangent is triangular. Along a
  symmetric (Hermitian) direction this is the derivative of the symmetric convention.
  `cholesky(a, upper=True)` (NumPy >= 2) reads the upper triangle. `svd` and `pinv` with
  hermitian=True factor (by eigh) the matrix the lower triangle makes, and are
  differentiated as such.
  `eigh` needs distinct eigenvalues, `svd` distinct non-zero singular values (equal ones
  give inf/NaN derivatives, as for real matrices).
- `eig` needs distinct eigenvalues: for A = V diag(w) V^-1, dw = diag(V^-1 dA V) and
  dV = V (F * (V^-1 dA V)), F_ij = 1/(w_j - w_i), then NumPy's unit-length columns
  (dv - v Re(v^H dv)); the VJP is its transpose. Each column's sign (phase when complex) is
  NumPy's choice: differentiate gauge-invariant uses (|V|^2, eigenprojectors, w alone).
  Complex matrices and complex eigenvalues work on every NumPy; NumPy >= 2.5 returns complex
  results even for a real matrix, and a real matrix's cotangent stays real. On NumPy < 2.5 a
  real matrix's results are real or complex depending on its values: the compiler takes them
  as complex on every NumPy (so what is computed from them holds for both: differentiate a
  real function of them, np.real(w), |w|, |V|^2), and differentiating eig of a real matrix
  whose spectrum is complex raises a ValueError at run time (pass a + 0j to get complex
  eigenvalues differentiated).
- `svd` is covered for `full_matrices=False` (or square input) and `compute_uv=False`;
  `qr` for mode="reduced" with m >= n; `pinv` for full-rank input.
- `norm` at 0 gives the subgradient 0 (every supported `ord`); ties in `ord=inf` share the
  derivative evenly. Matrix norms (a 2-D input with `ord` given, or a pair of `axis`) work on
  stacks along any axis pair: nuclear U V^T, spectral u1 v1^T (distinct top singular value),
  `ord=1`/`inf` the sign pattern of the largest column/row (ties share evenly); `ord` and
  `axis` must be known at compile time. A complex input's norm is real: conj(x)/|x| takes
  the place of sign(x) (conj(U V^H) for the nuclear norm), in JAX's convention.
- inv, solve, det and matrix_power are holomorphic: their rules hold for complex matrices as
  written (transposes, no conjugates). `slogdet` of a complex matrix: log|det| moves by
  Re(t) and the sign (a unit complex number) by i sign Im(t), t = tr(solve(a, da)).
- Complex cholesky, eigh, eigvalsh, svd, svdvals, qr, pinv and eig (JAX's formulas; the VJP is
  the transpose of the real-linear JVP): for A = U diag(w) U^H, dw = Re diag(U^H dA U) and
  dU = U (F * (U^H dA U)), F_ij = 1/(w_j - w_i); for A = U diag(s) V^H, ds = Re diag(U^H dA V),
  with the phase i Im(U^H dA V)_jj / s_j given to u_j (none to v_j); cholesky
  dL = L Phi(L^-1 dA L^-H); qr keeps R's diagonal real (Q^H dQ gets i Im diag(Q^H dA R^-1));
  pinv's formula with conjugate transposes. Eigenvectors and singular vectors are defined up
  to a phase (a sign when real): only the derivatives of gauge-invariant functions of them
  (|U|^2, U diag(w) U^H, projectors, u_j v_j^H, or the values alone) are meaningful, and those
  are right.
Tuple results (slogdet, eigh, svd, qr) have a tuple tangent and a tuple cotangent; a JVP rule
builds its tuple with `make_tuple` (see docs/writing_rules.md).
"""

import numpy as np

from s2sad.ir.kinds import KIND_RULES, Kind, array, array_of_rank
from s2sad.ir.prims import cofactor, make_tuple, unbroadcast, zeros_like
from s2sad_rules.kind_tests import is_complex
from s2sad_rules.numpy_reductions import expand_reduced
from s2sad_rules.operators import real_like
from s2sad_rules.refusals import supported
from s2sad_rules.registry import Unknown, def_linear, def_nondiff, defcheck, defjvp, defvjp


def mT(x):
    """The matrix transpose of a (stack of) matrices."""
    return np.swapaxes(x, -1, -2)


def right_solve(x, r):
    """x @ inv(r), by a solve."""
    return mT(np.linalg.solve(mT(r), mT(x)))


def diag_matrix(d):
    """A (stack of) diagonal matrices from the vectors `d`."""
    return np.expand_dims(d, -2) * np.eye(np.shape(d)[-1])


def inverse_gaps(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it."""
    eye = np.eye(np.shape(w)[-1])
    return (1.0 - eye) / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye)


def adj(x):
    """The conjugate transpose of a (stack of) matrices: mT(x) for a real x."""
    return conj_of(mT(x))


def triangle_read(x, UPLO="L"):
    """The Hermitian matrix that eigh, eigvalsh and cholesky factor when given x: x's lower
    (UPLO "U": upper) triangle reflected, and the real part of its diagonal."""
    if UPLO == "U" or UPLO == "u":
        t = np.triu(x, 1)
    else:
        t = np.tril(x, -1)
    return t + adj(t) + diag_matrix(real_diagonal(x))


def triangle_read_bar(g, UPLO="L"):
    """The transpose of triangle_read: the cotangent of the triangle read (each off-diagonal
    entry gets g_ij + conj(g_ji)), 0 on the other triangle."""
    both = g + adj(g)
    if UPLO == "U" or UPLO == "u":
        t = np.triu(both, 1)
    else:
        t = np.tril(both, -1)
    return t + diag_matrix(real_diagonal(g))


def real_diagonal(p):
    """The diagonal of p, its real part when p is complex (a Hermitian p's is real)."""
    return real_of(np.diagonal(p, 0, -2, -1), p)


def imag_diagonal(p):
    """i Im(diag(p)) as a diagonal matrix (the gauge part of U^H dU), 0 for a real p."""
    return diag_matrix(1j * np.imag(np.diagonal(p, 0, -2, -1)))


@defjvp(np.linalg.inv)
def inv_jvp(a, a_dot, ans):
    return -(ans @ a_dot @ ans)


@defvjp(np.linalg.inv)
def inv_vjp(g, ans, a):
    return -(mT(ans) @ g @ mT(ans))


@defjvp(np.linalg.solve)
def solve_jvp(a, b, a_dot, b_dot, ans):
    return np.linalg.solve(a, b_dot - a_dot @ ans)


@defvjp(np.linalg.solve)
def solve_vjp(g, ans, a, b):
    b_bar = np.linalg.solve(mT(a), g)
    if np.ndim(b) == 1:
        return unbroadcast(-np.expand_dims(b_bar, -1) * np.expand_dims(ans, -2), a), b_bar
    return unbroadcast(-(b_bar @ mT(ans)), a), unbroadcast(b_bar, b)


# det's derivative is its cofactor matrix det(a) inv(a)^T, which a singular matrix has too
# (JAX's convention: the adjugate's transpose, zero where the rank is below n - 1)
@defjvp(np.linalg.det)
def det_jvp(a, a_dot, ans):
    return np.sum(cofactor(a) * a_dot, axis=(-2, -1))


@defvjp(np.linalg.det)
def det_vjp(g, ans, a):
    return np.expand_dims(np.expand_dims(g, -1), -1) * cofactor(a)


# d cofactor(a) = tr(X) cofactor(a) - cofactor(a) X^T with X = inv(a) a_dot (second order:
# at an invertible matrix only)
@defjvp(cofactor)
def cofactor_jvp(a, a_dot, ans):
    x = np.linalg.solve(a, a_dot)
    t = np.trace(x, axis1=-2, axis2=-1)
    return np.expand_dims(np.expand_dims(t, -1), -1) * ans - ans @ mT(x)


@defvjp(cofactor)
def cofactor_vjp(g, ans, a):
    total = np.sum(g * ans, axis=(-2, -1), keepdims=True)
    # <g, d cofactor> = <X, total I - g^T cofactor> = <a_dot, inv(a)^T (total I - g^T cofactor)>
    return np.linalg.solve(mT(a), total * np.eye(np.shape(a)[-1]) - mT(g) @ ans)


@defjvp(np.linalg.slogdet)
def slogdet_jvp(a, a_dot, ans):
    t = np.trace(np.linalg.solve(a, a_dot), axis1=-2, axis2=-1)  # d log det a
    if is_complex(a):
        # log|det| moves by Re(t), the sign e^{i theta} by i sign Im(t)
        return make_tuple(ans[0] * 1j * np.imag(t), np.real(t))
    # the sign of a real determinant is piecewise constant: its tangent is 0
    return make_tuple(zeros_like(ans[0]), t)


@defvjp(np.linalg.slogdet)
def slogdet_vjp(g, ans, a):
    if is_complex(a):
        # the transpose of the JVP above (JAX's convention): inv(a)^T (g_logabs + i Im(sign
        # g_sign))
        w = g[1] + 1j * np.imag(ans[0] * g[0])
        return np.expand_dims(np.expand_dims(w, -1), -1) * mT(np.linalg.inv(a))
    return np.expand_dims(np.expand_dims(g[1], -1), -1) * mT(np.linalg.inv(a))


def lower_half(x):
    """The lower triangle of x with its diagonal halved (Phi in the Cholesky derivative)."""
    return np.tril(x) * (1.0 - 0.5 * np.eye(np.shape(x)[-1]))


@defjvp(np.linalg.cholesky)
def cholesky_jvp(a, upper=False, a_dot=0.0, ans=0.0):
    # upper=True (NumPy >= 2): U = L^H for the L of the matrix the upper triangle makes
    if upper:
        low = adj(ans)
        da = triangle_read(a_dot, "U")
    else:
        low = ans
        da = triangle_read(a_dot)
    # L^-1 dA L^-H for the Hermitian dA NumPy's triangle makes of a_dot
    s = np.linalg.solve(low, adj(np.linalg.solve(low, adj(da))))
    if upper:
        return adj(low @ lower_half(s))
    return low @ lower_half(s)


@defvjp(np.linalg.cholesky)
def cholesky_vjp(g, ans, a, upper=False):
    if upper:  # (the transpose of dL -> dL^H is g -> g^H)
        low = adj(ans)
        g = adj(g)
    else:
        low = ans
    p = lower_half(mT(low) @ g)
    # L^-T p conj(L)^-1, then the transpose of reading the triangle
    s = np.linalg.solve(mT(low), mT(np.linalg.solve(adj(low), mT(p))))
    if upper:
        return triangle_read_bar(s, "U")
    return triangle_read_bar(s)


@defjvp(np.linalg.eigh)
def eigh_jvp(a, UPLO="L", a_dot=0.0, ans=0.0):
    w = ans[0]
    v = ans[1]
    rotated = adj(v) @ triangle_read(a_dot, UPLO) @ v  # U^H dA U, Hermitian
    w_dot = real_diagonal(rotated)
    return make_tuple(w_dot, v @ (inverse_gaps(w) * rotated))


@defvjp(np.linalg.eigh)
def eigh_vjp(g, ans, a, UPLO="L"):
    w = ans[0]
    v = ans[1]
    inner = diag_matrix(g[0]) + inverse_gaps(w) * (mT(v) @ g[1])
    return triangle_read_bar(conj_of(v) @ inner @ mT(v), UPLO)


def real_spectrum(w):
    """w itself; a complex spectrum is refused when it happens (it depends on the values)."""
    if np.iscomplexobj(w):
        raise ValueError("s2sad: the derivative of np.linalg.eig of a real matrix covers real "
                         "eigenvalues only on this NumPy; this matrix has complex ones (pass "
                         "a complex matrix, a + 0j, for complex eigenvalues)")
    return w


# the identity where it returns: eig's rules stay differentiable (second order)
@defjvp(real_spectrum)
def real_spectrum_jvp(w, w_dot):
    return w_dot


@defvjp(real_spectrum)
def real_spectrum_vjp(g, w):
    return g


# NumPy 2.5 returns complex eigenvalues from eig even for a real spectrum
EIG_RETURNS_COMPLEX = np.linalg.eig(np.eye(1))[0].dtype.kind == "c"


if EIG_RETURNS_COMPLEX:
    def eig_values(w, a):
        """eig's eigenvalues: always complex on this NumPy (the compiler knows)."""
        return w

    def eig_conj(x, a):
        """conj(x) for eig's (complex) vectors."""
        return np.conj(x)

    def eig_real(x, a):
        """Re(x) for eig's (complex) vectors."""
        return np.real(x)
else:
    def eig_values(w, a):
        """eig's eigenvalues: complex for a complex `a`; for a real one, real on this NumPy
        (their dtype depends on the values: the compiler takes them as real, so a complex
        spectrum is refused when it happens)."""
        if is_complex(a):
            return w
        return real_spectrum(w)

    # decided from `a`'s kind: the kind of eig's results for a real `a` depends on the values
    def eig_conj(x, a):
        """conj(x) for a complex `a`, x for a real one (its eigenvectors are real)."""
        if is_complex(a):
            return np.conj(x)
        return x

    def eig_real(x, a):
        """Re(x) for a complex `a`, x for a real one."""
        if is_complex(a):
            return np.real(x)
        return x


def _cholesky_kind(args, kwargs):
    """cholesky's result has its input's shape and float dtype (evaluated on a stand-in,
    which is not positive definite, it had none: jacfwd/jacrev needed its shape)."""
    a = args[0] if args else None
    if a is None or a.tag != "array" or a.dtype not in ("f", "c") or a.known:
        return None
    return a


def _eig_kind(args, kwargs):
    """eig's results are complex, whatever NumPy returns for a real matrix: the rules and the
    code around them then hold for both (conj and |.| of a real value are the value and its
    sign). NumPy before 2.5 returns real arrays for a real spectrum and complex ones otherwise;
    evaluated on a random stand-in, the kind was real for some shapes (2 x 2) and complex for
    others, and where it was real, a complex spectrum at run time went through rules made
    for real numbers (a complex gradient of sum |w * x| in x)."""
    a = args[0] if args else None
    if a is None or a.tag != "array" or a.dtype not in ("f", "c") or a.known:
        return None
    if a.shape is not None:
        return Kind("tuple", items=(array("c", a.shape[:-1]), array("c", a.shape)))
    if a.rank is not None:
        return Kind("tuple", items=(array_of_rank("c", a.rank - 1), array_of_rank("c", a.rank)))
    return None


KIND_RULES[np.linalg.cholesky] = _cholesky_kind
KIND_RULES[np.linalg.eig] = _eig_kind


def unit_columns_bar(v_bar, v, a):
    """Cotangent through the scaling of eigenvectors to unit length: the transpose of
    dv -> dv - v Re(v^H dv) (column by column)."""
    return v_bar - eig_conj(v, a) * eig_real(np.sum(v * v_bar, axis=-2, keepdims=True), a)


@defjvp(np.linalg.eig)
def eig_jvp(a, a_dot, ans):
    # A V = V diag(w): P = V^-1 dA V; dw = diag(P); dV = V (F * P), then kept at unit length
    w = eig_values(ans[0], a)
    v = ans[1]
    p = np.linalg.solve(v, a_dot @ v)
    v_dot = v @ (inverse_gaps(w) * p)
    v_dot = v_dot - v * eig_real(np.sum(eig_conj(v, a) * v_dot, axis=-2, keepdims=True), a)
    return make_tuple(np.diagonal(p, 0, -2, -1), v_dot)


@defvjp(np.linalg.eig)
def eig_vjp(g, ans, a):
    w = eig_values(ans[0], a)
    v = ans[1]
    inner = diag_matrix(g[0]) + inverse_gaps(w) * (mT(v) @ unit_columns_bar(g[1], v, a))
    # a real input's cotangent is real (the compiler may not know that w is real)
    return real_like(np.linalg.solve(mT(v), inner @ mT(v)), a)


@defjvp(np.linalg.eigvalsh)
def eigvalsh_jvp(a, UPLO="L", a_dot=0.0):
    v = np.linalg.eigh(a, UPLO)[1]
    return real_diagonal(adj(v) @ triangle_read(a_dot, UPLO) @ v)


@defvjp(np.linalg.eigvalsh)
def eigvalsh_vjp(g, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    return triangle_read_bar(conj_of(v) @ diag_matrix(g) @ mT(v), UPLO)


def thin_svd(a, full_matrices):
    """0.0 where U and V^H are the thin factors (full_matrices=False or a square matrix);
    the completed bases of a non-square matrix are refused (they are not unique)."""
    return supported(not full_matrices or np.shape(a)[-1] == np.shape(a)[-2],
                     "np.linalg.svd of a non-square matrix", "full_matrices", full_matrices)


@defjvp(np.linalg.svd)
def svd_jvp(a, full_matrices=True, compute_uv=True, hermitian=False, a_dot=0.0, ans=0.0):
    if hermitian:  # NumPy factors (by eigh) the Hermitian matrix its lower triangle makes
        a = triangle_read(a)
        a_dot = triangle_read(a_dot)
    if not compute_uv:
        usv = np.linalg.svd(a, full_matrices=False)
        return real_diagonal(adj(usv[0]) @ a_dot @ adj(usv[2]))
    u = ans[0] + thin_svd(a, full_matrices)
    s = ans[1]
    v = adj(ans[2])
    dp = adj(u) @ a_dot @ v  # U^H dA V
    f = inverse_gaps(s * s)
    s_row = np.expand_dims(s, -2)
    s_col = np.expand_dims(s, -1)
    du = u @ (f * (dp * s_row + s_col * adj(dp))) + (a_dot @ v - u @ (adj(u) @ a_dot @ v)) / s_row
    if is_complex(a):
        # the phases: U gets i Im(dP_jj) / s_j, V none (only their difference is defined)
        du = du + u @ (imag_diagonal(dp) / s_row)
    dv = v @ (f * (s_col * dp + adj(dp) * s_row)) + (
        adj(a_dot) @ u - v @ (adj(v) @ adj(a_dot) @ u)) / s_row
    return make_tuple(du, real_diagonal(dp), adj(dv))


@defvjp(np.linalg.svd)
def svd_vjp(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    if hermitian:  # (see svd_jvp)
        return triangle_read_bar(general_svd_vjp(g, ans, triangle_read(a), full_matrices,
                                                 compute_uv))
    return general_svd_vjp(g, ans, a, full_matrices, compute_uv)


def general_svd_vjp(g, ans, a, full_matrices, compute_uv):
    """svd's VJP for the matrix `a` it factors."""
    if not compute_uv:
        usv = np.linalg.svd(a, full_matrices=False)
        return conj_of(usv[0] @ diag_matrix(g) @ usv[2])
    u = ans[0] + thin_svd(a, full_matrices)
    s = ans[1]
    vh = ans[2]
    v = adj(vh)
    u_bar = g[0]
    v_bar = adj(g[2])
    f = inverse_gaps(s * s)
    s_row = np.expand_dims(s, -2)
    s_col = np.expand_dims(s, -1)
    # the transpose of the JVP (JAX's convention): cotangent of dP = U^H dA V, then of dA
    y_u = f * (mT(u) @ u_bar)
    y_v = f * (mT(v) @ v_bar)
    core = (y_u + adj(y_u)) * s_row + diag_matrix(g[1]) + s_col * (y_v + adj(y_v))
    if is_complex(a):
        core = core + imag_diagonal(mT(u) @ u_bar) / s_row
    left = (u_bar - conj_of(u) @ (mT(u) @ u_bar)) / s_row
    right = (adj(v_bar) - (adj(v_bar) @ conj_of(v)) @ mT(v)) / s_col
    return conj_of(u) @ core @ mT(v) + left @ mT(v) + conj_of(u) @ right


@defjvp(np.linalg.svdvals)
def svdvals_jvp(x, x_dot):
    usv = np.linalg.svd(x, full_matrices=False)
    return real_diagonal(adj(usv[0]) @ x_dot @ adj(usv[2]))


@defvjp(np.linalg.svdvals)
def svdvals_vjp(g, x):
    usv = np.linalg.svd(x, full_matrices=False)
    return conj_of(usv[0] @ diag_matrix(g) @ usv[2])


@defjvp(np.linalg.qr)
def qr_jvp(a, mode="reduced", a_dot=0.0, ans=0.0):
    q = ans[0] + supported(mode == "reduced", "np.linalg.qr", "mode", mode)
    r = ans[1]
    x = right_solve(a_dot, r)
    c = adj(q) @ x
    low = np.tril(c, -1)
    # Q^H dQ = low - low^H (+ i Im diag(c): R keeps a real diagonal); dR = (c - Q^H dQ) R
    m = c - low + adj(low)
    if is_complex(a):
        m = m - imag_diagonal(c)
    r_dot = m @ r
    return make_tuple(x - q @ right_solve(r_dot, r), r_dot)


@defvjp(np.linalg.qr)
def qr_vjp(g, ans, a, mode="reduced"):
    q = ans[0] + supported(mode == "reduced", "np.linalg.qr", "mode", mode)
    r = ans[1]
    b = g[1] @ mT(r) - mT(q) @ g[0]
    n = np.triu(b, 1) + real_diagonal_matrix(b) + np.tril(adj(b), -1)
    return mT(np.linalg.solve(r, mT(g[0] + conj_of(q) @ n)))


def real_diagonal_matrix(b):
    """The diagonal of b as a diagonal matrix, its real part for a complex b."""
    return diag_matrix(real_diagonal(b))


def identity_like(x):
    """The identity matrix matching the last axis of x."""
    return np.eye(np.shape(x)[-1])


@defjvp(np.linalg.pinv)
def pinv_jvp(a, rcond=None, hermitian=False, a_dot=0.0, ans=0.0):
    if hermitian:  # NumPy inverts (by eigh) the Hermitian matrix its lower triangle makes
        a = triangle_read(a)
        a_dot = triangle_read(a_dot)
    p = ans
    return (-(p @ a_dot @ p) + p @ adj(p) @ adj(a_dot) @ (identity_like(a @ p) - a @ p)
            + (identity_like(p @ a) - p @ a) @ adj(a_dot) @ adj(p) @ p)


@defvjp(np.linalg.pinv)
def pinv_vjp(g, ans, a, rcond=None, hermitian=False):
    if hermitian:  # (see pinv_jvp)
        return triangle_read_bar(general_pinv_vjp(g, ans, triangle_read(a)))
    return general_pinv_vjp(g, ans, a)


def general_pinv_vjp(g, p, a):
    """pinv's VJP for the matrix `a` it inverts (p = pinv(a))."""
    return (-(mT(p) @ g @ mT(p))
            + conj_of(identity_like(a @ p) - a @ p) @ adj(g) @ conj_of(p) @ mT(p)
            + mT(p) @ conj_of(p) @ adj(g) @ conj_of(identity_like(p @ a) - p @ a))


def safe_divisor(x):
    """x with its zeros replaced by 1: divides a numerator that is itself 0 there."""
    return np.where(x == 0.0, 1.0, x)


@def_nondiff
def matrix_axes(ndim, ord, axis):
    """The (row, column) axes when np.linalg.norm computes a matrix norm, else None."""
    if axis is None:
        if ndim == 2 and ord is not None:
            return (0, 1)
        return None
    if isinstance(axis, tuple) and len(axis) == 2 and ord is not None:
        return (axis[0] % ndim, axis[1] % ndim)
    return None


def matrix_norm_slope(x, ord, axes):
    """d norm / d x for the matrix norms (nuclear, spectral, max column / row sum).

    Nuclear: U V^T; spectral (ord 2 / -2): u v^T of the largest / smallest singular value;
    ord 1 / -1 (inf / -inf): sign(x) on the column (row) with the largest / smallest absolute
    sum, ties sharing evenly. The Frobenius norm goes through `norm_slope`.
    """
    if ord == "nuc" or ord == 2 or ord == -2:
        xm = np.moveaxis(x, axes, (-2, -1))
        usv = np.linalg.svd(xm, full_matrices=False)
        if ord == "nuc":
            d = usv[0] @ usv[2]
        elif ord == 2:
            d = usv[0][..., :, :1] @ usv[2][..., :1, :]
        else:
            d = usv[0][..., :, -1:] @ usv[2][..., -1:, :]
        return np.moveaxis(conj_of(d), (-2, -1), axes)
    if ord == 1 or ord == -1:
        sums = np.sum(np.abs(x), axis=axes[0], keepdims=True)
        pick = axes[1]
    else:
        sums = np.sum(np.abs(x), axis=axes[1], keepdims=True)
        pick = axes[0]
    if ord > 0:
        top = sums == np.max(sums, axis=pick, keepdims=True)
    else:
        top = sums == np.min(sums, axis=pick, keepdims=True)
    return sign_conj(x) * (top / np.sum(top, axis=pick, keepdims=True))


@defcheck(np.linalg.norm)
def norm_check(x, ord=None, axis=None):
    if isinstance(ord, Unknown) or isinstance(axis, Unknown):
        return "an `ord` or `axis` not known at compile time"
    if ord not in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf) and \
            matrix_axes(x.ndim if isinstance(x, Unknown) else np.ndim(x), ord, axis) is not None:
        return f"the matrix norm ord={ord!r}"
    return None


@defjvp(np.linalg.norm)
def norm_jvp(x, ord=None, axis=None, keepdims=False, x_dot=0.0, ans=0.0):
    axes = matrix_axes(np.ndim(x), ord, axis)
    if axes is not None and ord != "fro":
        return real_of(np.sum(matrix_norm_slope(x, ord, axes) * x_dot, axis=axes,
                              keepdims=keepdims), x)
    return real_of(np.sum(norm_slope(x, ord, axis, keepdims, ans) * x_dot, axis=axis,
                          keepdims=keepdims), x)


@defvjp(np.linalg.norm)
def norm_vjp(g, ans, x, ord=None, axis=None, keepdims=False):
    axes = matrix_axes(np.ndim(x), ord, axis)
    if axes is not None and ord != "fro":
        return np.expand_dims(g, axes) * matrix_norm_slope(x, ord, axes) if not keepdims \
            else g * matrix_norm_slope(x, ord, axes)
    return expand_reduced(g, x, axis, keepdims) * norm_slope(x, ord, axis, keepdims, ans)


def conj_of(x):
    """conj(x), x itself when x is real (decided at compile time)."""
    if is_complex(x):
        return np.conj(x)
    return x


def sign_conj(x):
    """sign(x), or conj(x) / |x| (0 at 0) for a complex x: the slope of |x| in JAX's
    convention (the cotangent of z = a + ib is d/da - i d/db)."""
    if is_complex(x):
        return np.conj(x) / (np.abs(x) + (x == 0))
    return np.sign(x)


def real_of(t, x):
    """The tangent t of a norm of x: its real part when x is complex (a norm is real)."""
    if is_complex(x):
        return np.real(t)
    return t


def norm_slope(x, ord, axis, keepdims, ans):
    """d norm / d x for the vector norms and the Frobenius norm (0 where the norm is 0); for a
    complex x, conj(x)/|x| takes the place of sign(x) (the norm is a function of |x|)."""
    norm = expand_reduced(ans, x, axis, keepdims)
    if ord is None or ord == 2 or ord == "fro":
        return conj_of(x) / safe_divisor(norm)
    if ord == 1:
        return sign_conj(x)
    if ord == np.inf or ord == -np.inf:  # the largest (smallest) entries share evenly
        top = np.abs(x) == norm
        return sign_conj(x) * top / np.sum(top, axis=axis, keepdims=True)
    if ord == 0:  # the number of nonzero entries: constant
        return zeros_like(x)
    p_1 = ord - 1.0
    # a zero entry (slope infinite for ord < 1) takes the zero subgradient, as a zero norm
    return sign_conj(x) * ((np.abs(x) + (x == 0)) / safe_divisor(norm)) ** p_1


@defjvp(np.linalg.vector_norm)
def vector_norm_jvp(x, axis=None, keepdims=False, ord=2, x_dot=0.0, ans=0.0):
    return real_of(np.sum(norm_slope(x, ord, axis, keepdims, ans) * x_dot, axis=axis,
                          keepdims=keepdims), x)


@defvjp(np.linalg.vector_norm)
def vector_norm_vjp(g, ans, x, axis=None, keepdims=False, ord=2):
    return expand_reduced(g, x, axis, keepdims) * norm_slope(x, ord, axis, keepdims, ans)


def power_tangent(base, base_dot, n):
    """d(B^n)[dB]: the upper-right block of [[B, dB], [0, B]]^n (no loop needed)."""
    m = np.shape(base)[-1]
    top = np.concatenate([base, base_dot], -1)
    bottom = np.concatenate([zeros_like(base), base], -1)
    return np.linalg.matrix_power(np.concatenate([top, bottom], -2), n)[..., :m, m:]


@defjvp(np.linalg.matrix_power)
def matrix_power_jvp(a, n, a_dot):
    if n < 0:
        b = np.linalg.inv(a)
        return power_tangent(b, -(b @ a_dot @ b), -n)
    return power_tangent(a, a_dot, n)


@defvjp(np.linalg.matrix_power, wrt=("a",))
def matrix_power_vjp(g, a, n):
    if n < 0:
        b = np.linalg.inv(a)
        return -(mT(b) @ power_tangent(mT(b), g, -n) @ mT(b))
    return power_tangent(mT(a), g, n)


def_linear(real_spectrum)
