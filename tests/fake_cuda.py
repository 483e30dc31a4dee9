"""A CUDA stand-in for machines without a GPU: tensors that say they live on ``cuda:0``, keep
their numbers on the CPU, and refuse what CUDA refuses.

It exists so that the device handling of monosem is tested on every commit, on a CPU. Turn it on
with :func:`enable` / :func:`disable` or ``with fake_cuda(): ...``; a Python process started with
``MONOSEM_FAKE_CUDA=1`` and ``tests/fake_cuda_site`` on ``PYTHONPATH`` turns it on at start-up
(that folder's ``sitecustomize``), which is how a notebook's kernel and the spawned workers of
``monosem run --jobs N`` get it. Nothing in the ``monosem`` package knows about it.

While it is on
--------------
* ``torch.cuda.is_available()`` is true (so :func:`monosem.device.get_device` picks ``cuda``),
  with one device, ``cuda:0``; ``mem_get_info``, ``get_device_properties``, ``get_device_name``,
  ``synchronize``, ``manual_seed(_all)``, ``empty_cache`` and the memory counters answer for a
  T4-sized device (fixed numbers).
* Every torch function given ``device="cuda"`` / ``"cuda:0"`` / ``torch.device("cuda")``
  (factories such as ``torch.zeros``, ``torch.arange``, ``torch.tensor``, ``new_*``, ``*_like``),
  ``Tensor.to`` / ``Tensor.cuda`` to a CUDA device, and ``nn.Module.to`` make
  :class:`FakeCudaTensor`\\ s: a wrapper (``__torch_dispatch__``) whose ``device`` is ``cuda:0``,
  around a CPU tensor holding the numbers. ``torch.load(..., map_location=<cuda>)`` gives them
  too, and ``torch.save`` stores their numbers.

What it enforces (each raises what CUDA raises, a ``RuntimeError`` or ``TypeError``)
-------------------------------------------------------------------------------------
1. **One device per operation.** An operation that meets a stand-in tensor and a CPU tensor of
   one or more dimensions raises ("Expected all tensors to be on the same device"). A CPU tensor
   of zero dimensions (a "CPU scalar") passes only where CUDA lets it: pointwise operations,
   ``fill_``, ``masked_fill`` and the values of an indexing assignment. Crossing devices is
   allowed exactly where CUDA allows it: copies (``.to``, ``.cpu()``, ``.cuda()``, ``copy_``),
   and CPU index tensors into a CUDA tensor (``x[idx]``, ``x[idx] = v``); CUDA indices into a
   CPU tensor raise.
2. **Generators.** A random draw onto the CUDA device (a factory with ``device="cuda"``, or an
   in-place draw such as ``normal_`` on a stand-in tensor) with a CPU ``torch.Generator``
   raises ("Expected a 'cuda' device type for generator but found 'cpu'").
3. **Host copies are explicit.** ``.numpy()`` and ``numpy.asarray`` of a stand-in tensor raise
   ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() ..."); ``.cpu()`` first
   works. ``.item()``, ``.tolist()``, ``float()`` and formatting work, as on CUDA.
4. **Fork after initialisation.** In a process forked after the stand-in device was used (a
   stand-in tensor made, or memory / properties queried), any use of the device raises "Cannot
   re-initialize CUDA in forked subprocess", as CUDA does: multiprocessing must spawn.

What it does not model
----------------------
* **Memory**: no limit, no out-of-memory; ``mem_get_info`` reports fixed numbers (14 of 15 GiB
  free), so code sizing its work by free memory sees a T4, not a measured device.
* **Speed and asynchrony**: everything runs synchronously on the CPU, slower than plain CPU
  tensors (each operation passes through Python); its timings mean nothing. No streams, events,
  pinned memory or ``non_blocking`` semantics.
* **Numerics**: CPU kernels compute the numbers (CPU reduction orders, no TF32, none of the
  nondeterminism of CUDA's atomics); results match a CPU run, not a GPU's last bits.
* **Autograd's device guard**: autograd records on the CPU tensors inside the wrappers (the
  C++ autograd engine never sees a CUDA device, which it could not serve in a CPU build), so the
  engine's own device checks (a gradient arriving on the wrong device, a backward stream) are not
  made; in operations that need gradients a CPU scalar is let through wherever a tensor is.
* **CUDA generators**: ``torch.Generator(device="cuda")`` is not provided (a CPU build refuses
  it), nor CUDA's random streams.
* **More than one device**, ``cuda:1`` and peer copies; dtypes CUDA lacks or runs slowly
  (float64 at 1/32 of the float32 rate on a T4) are computed like any other.
* **What a saved file records**: ``torch.save`` stores the numbers with a CPU location, so
  ``torch.load`` without ``map_location`` returns CPU tensors where CUDA would return CUDA ones.
* Operations that change a tensor's storage in place (``resize_``, ``set_``, an ``out=`` tensor
  of the wrong size) raise ``NotImplementedError`` rather than run; raw storage (``data_ptr``, ``untyped_storage``,
  ``share_memory_``) is not available.
"""

from __future__ import annotations

import contextlib
import os
import types
from typing import Any, Iterator

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten, tree_map

__all__ = ["FakeCudaTensor", "enable", "disable", "enabled", "fake_cuda", "ENV_VAR"]

#: the environment variable that turns the stand-in on at interpreter start-up (with
#: ``tests/fake_cuda_site`` on ``PYTHONPATH``)
ENV_VAR = "MONOSEM_FAKE_CUDA"

CUDA = torch.device("cuda", 0)
_GiB = 1 << 30
_TOTAL_MEMORY, _FREE_MEMORY = 15 * _GiB, 14 * _GiB

_FORK_MESSAGE = ("Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
                 "the 'spawn' start method")


class _State:
    enabled = False
    initialised = False  # the device was used in this process
    bad_fork = False  # this process was forked after the device was used
    mode: "_FakeCudaMode | None" = None
    saved: dict[tuple[Any, str], Any] = {}


_state = _State()


def _after_fork_in_child() -> None:
    if _state.initialised:
        _state.bad_fork = True


os.register_at_fork(after_in_child=_after_fork_in_child)


def _touch() -> None:
    """Use of the device: initialise it, or refuse in a process forked after it was initialised."""
    if _state.bad_fork:
        raise RuntimeError(_FORK_MESSAGE)
    _state.initialised = True


def _is_cuda(device: Any) -> bool:
    if device is None:
        return False
    if isinstance(device, int):  # a bare index names a CUDA device in torch's APIs
        return True
    return torch.device(device).type == "cuda"


def _check_cuda_index(device: Any) -> None:
    dev = torch.device("cuda", device) if isinstance(device, int) else torch.device(device)
    if dev.index not in (None, 0):
        raise RuntimeError(f"CUDA error: invalid device ordinal (the stand-in has one device, cuda:0; got {dev})")


class FakeCudaTensor(torch.Tensor):
    """A tensor whose ``device`` is ``cuda:0`` and whose numbers are the CPU tensor ``elem``.

    Made by the stand-in (factories, ``.to("cuda")``); see the module docstring for the rules.
    The wrapper itself never requires gradients: autograd records on ``elem``.
    """

    elem: torch.Tensor

    @staticmethod
    def __new__(cls, elem: torch.Tensor) -> "FakeCudaTensor":
        if isinstance(elem, FakeCudaTensor) or elem.device.type != "cpu":
            raise TypeError(f"a FakeCudaTensor wraps a CPU tensor, got one on {elem.device}")
        _touch()
        if type(elem) is not torch.Tensor:
            elem = elem.as_subclass(torch.Tensor)
        out = torch.Tensor._make_wrapper_subclass(
            cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(), dtype=elem.dtype,
            layout=elem.layout, device=CUDA, requires_grad=False,
        )
        out.elem = elem
        return out

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        special = _SPECIAL.get(func)
        if special is not None:
            return special(*args, **kwargs)
        if (getattr(func, "__name__", "") == "__get__" and _property_name(func) not in _OP_PROPERTIES) or func in _METADATA:
            # a property (device, shape, dtype, ...) or a metadata query: the wrapper answers
            with torch._C.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        if torch.is_grad_enabled() and _needs_grad(args, kwargs):
            return _python_level(func, args, kwargs)
        try:
            with torch._C.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        except (RuntimeError, NotImplementedError) as err:
            if not any(m in str(err) for m in _CPU_BUILD_REFUSALS):
                raise
        # the operation's C++ front end took a CUDA device guard or allocated on the device itself
        # (a composite making a scalar tensor with the CUDA tensor's options), which a CPU build
        # cannot: run it at the Python level instead
        return _python_level(func, args, kwargs)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _state.bad_fork:
            raise RuntimeError(_FORK_MESSAGE)
        if func in _UNSUPPORTED:
            raise NotImplementedError(f"the CUDA stand-in does not model {func} (it changes a tensor's storage in place)")
        if func in _RESTRIDE and isinstance(args[0], FakeCudaTensor):
            # a view changed in place (matmul squeezes its result so): the numbers' tensor and the
            # wrapper's own sizes and strides both change
            self = args[0]
            func(self.elem, *args[1:], **kwargs)
            with torch._C._DisableTorchDispatch():
                func(self, *args[1:], **kwargs)
            if self.shape != self.elem.shape or self.stride() != self.elem.stride():
                raise NotImplementedError(f"the CUDA stand-in could not follow {func}")
            return self
        flat = [t for t in tree_flatten((args, kwargs))[0]]
        device = kwargs.get("device")
        has_fake = any(isinstance(t, FakeCudaTensor) for t in flat)
        _check_devices(func, args, kwargs, has_fake)
        out_cuda = _is_cuda(device) if device is not None else has_fake
        if out_cuda:
            _check_generators(flat)
        if device is not None and _is_cuda(device):
            _check_cuda_index(device)
            kwargs = {**kwargs, "device": torch.device("cpu")}
        inputs: dict[int, torch.Tensor] = {}

        def unwrap(x):
            if isinstance(x, FakeCudaTensor):
                inputs[id(x.elem)] = x
                return x.elem
            if isinstance(x, torch.Tensor):
                inputs.setdefault(id(x), x)
            return x

        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs))

        def wrap(x):
            if not isinstance(x, torch.Tensor):
                return x
            same = inputs.get(id(x))
            if same is not None:  # an in-place or out= result: the argument itself
                if isinstance(same, FakeCudaTensor) and same.shape != same.elem.shape:
                    raise NotImplementedError(f"the CUDA stand-in does not model {func} resizing a tensor in place")
                return same
            return FakeCudaTensor(x) if out_cuda else x

        return tree_map(wrap, out)


def _getitem(self, index):
    """``x[index]``. Python's indexing runs C++ that a stand-in tensor cannot enter (a CUDA device
    guard), so it runs here on the CPU tensors, after CUDA's rules: CPU index tensors into a CUDA
    tensor are moved to its device (allowed), CUDA index tensors into a CPU tensor raise."""
    if not isinstance(self, FakeCudaTensor):
        _refuse_cuda_indices(index)
        with torch._C.DisableTorchFunctionSubclass():
            return self[index]
    out = _unwrap_all(self)[_unwrap_all(index)]
    return FakeCudaTensor(out)


def _setitem(self, index, value):
    """``x[index] = value`` (see :func:`_getitem`). A CPU ``value`` of one or more dimensions is
    allowed for basic indexing, which copies (``copy_``), and refused for advanced indexing."""
    if not isinstance(self, FakeCudaTensor):
        _refuse_cuda_indices(index)
        if isinstance(value, FakeCudaTensor):
            raise _same_device_error("Tensor.__setitem__", self)
        with torch._C.DisableTorchFunctionSubclass():
            self[index] = value
        return
    if isinstance(value, torch.Tensor) and not isinstance(value, FakeCudaTensor) and value.dim() > 0 and _tensors(index):
        raise _same_device_error("Tensor.__setitem__ (index_put_)", value)
    elem = self.elem
    elem[_unwrap_all(index)] = _unwrap_all(value)


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    data = _unwrap_all(data)
    out = self.elem.new_tensor(data, dtype=dtype, device="cpu", requires_grad=requires_grad)
    return FakeCudaTensor(out) if device is None or _is_cuda(device) else out


def _copy_(self, src, non_blocking=False):
    """``dst.copy_(src)``: copies cross devices (CUDA allows it)."""
    if isinstance(self, FakeCudaTensor):
        self.elem.copy_(_unwrap_all(src))
        return self
    with torch._C.DisableTorchFunctionSubclass():
        return self.copy_(_unwrap_all(src))


def _refuse_cuda_indices(index) -> None:
    if any(isinstance(t, FakeCudaTensor) for t in _tensors(index)):
        raise RuntimeError("indices should be either on cpu or on the same device as the indexed tensor (cpu)")


def _tensors(tree) -> list[torch.Tensor]:
    return [t for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


def _needs_grad(args, kwargs) -> bool:
    for t in _tensors((args, kwargs)):
        if (t.elem if isinstance(t, FakeCudaTensor) else t).requires_grad:
            return True
    return False


def _same_device_error(func, t: torch.Tensor) -> RuntimeError:
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
                        f"(a CPU tensor of shape {tuple(t.shape)} met a CUDA tensor in {func})")


_aten = torch.ops.aten
#: crossing devices is what these do
_COPIES = {_aten.copy_.default, _aten._to_copy.default, _aten._copy_from.default, _aten._copy_from_and_resize.default}
#: CPU index tensors into a CUDA tensor are allowed (args: self, indices, [values, ...])
_INDEXING = {
    _aten.index.Tensor, _aten._unsafe_index.Tensor, _aten.index_put_.default, _aten.index_put.default,
    _aten._index_put_impl_.default, _aten._unsafe_index_put.default,
}
#: operations, besides the pointwise ones, that take a CPU scalar (0-dim) tensor with CUDA ones
_SCALAR_OK = {
    _aten.fill_.Tensor, _aten.fill.Tensor, _aten.masked_fill_.Tensor, _aten.masked_fill.Tensor,
    *_INDEXING,
}
#: in-place operations that change a tensor's storage: the wrapper could not follow
_UNSUPPORTED = {_aten.resize_.default, _aten.set_.source_Tensor, _aten.set_.source_Storage, _aten.set_.default,
                _aten.resize_as_.default}
#: in-place operations that change only a tensor's sizes and strides: applied to both
_RESTRIDE = {_aten.t_.default, _aten.transpose_.default, _aten.squeeze_.default, _aten.squeeze_.dim,
             _aten.squeeze_.dims, _aten.unsqueeze_.default, _aten.as_strided_.default, _aten.swapdims_.default,
             _aten.swapaxes_.default}


def _check_devices(func, args, kwargs, has_fake: bool) -> None:
    """CUDA's rule for one aten operation (see the module docstring, rule 1)."""
    if func in _COPIES:
        return
    checked: list[torch.Tensor]
    if func in _INDEXING:
        self, indices, rest = args[0], args[1], (args[2:], kwargs)
        index_tensors = _tensors(indices)
        if not isinstance(self, FakeCudaTensor):
            if any(isinstance(t, FakeCudaTensor) for t in index_tensors):
                raise RuntimeError("indices should be either on cpu or on the same device as the indexed tensor (cpu)")
            checked = [self, *_tensors(rest)]
        else:
            checked = [self, *_tensors(rest)]  # CPU indices are fine
    else:
        if not has_fake:
            return
        checked = _tensors((args, kwargs))
    if not any(isinstance(t, FakeCudaTensor) for t in checked):
        return
    scalar_ok = func in _SCALAR_OK or torch.Tag.pointwise in getattr(func, "tags", ())
    for t in checked:
        if isinstance(t, FakeCudaTensor):
            continue
        if t.dim() == 0 and scalar_ok:
            continue
        raise _same_device_error(func, t)


def _check_generators(flat) -> None:
    for g in flat:
        if isinstance(g, torch.Generator) and g.device.type != "cuda":
            raise RuntimeError(f"Expected a 'cuda' device type for generator but found '{g.device.type}'")


#: what a CPU build of torch says when C++ reaches for a CUDA device
_CPU_BUILD_REFUSALS = ("not linked with support for cuda devices", "with arguments from the 'CUDA' backend",
                       "Torch not compiled with CUDA enabled")
#: Python operator names whose aten operation has another name
_DUNDER_ATEN = {"truediv": "div", "rtruediv": "div", "floordiv": "floor_divide", "rfloordiv": "floor_divide",
                "radd": "add", "rmul": "mul", "rpow": "pow", "mod": "remainder", "rmod": "remainder",
                "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "rand": "bitwise_and", "ror": "bitwise_or",
                "invert": "bitwise_not", "iadd": "add_", "isub": "sub_", "imul": "mul_", "itruediv": "div_", "ipow": "pow_"}


def _python_scalar_ok(func) -> bool:
    """Whether a Python-level ``func`` takes CPU scalars with CUDA tensors: its aten operation is
    pointwise (or one of the few others that take them). Unknown names: no (strict)."""
    name = getattr(func, "__name__", "")
    bare = name.strip("_")
    packet = getattr(_aten, _DUNDER_ATEN.get(bare, bare), None)
    if packet is None or not hasattr(packet, "overloads"):
        return False
    for overload in packet.overloads():
        op = getattr(packet, overload)
        if torch.Tag.pointwise in op.tags or op in _SCALAR_OK:
            return True
    return False


def _python_level(func, args, kwargs):
    """Run an operation on the CPU tensors inside, at the Python level, after CUDA's device rule
    (applied to its Python arguments), and wrap what comes out. Used for operations that need
    gradients (autograd then records on the CPU tensors) and for those whose C++ front end a CPU
    build cannot run on a CUDA tensor."""
    tensors = checked = _tensors((args, kwargs))
    has_fake = any(isinstance(t, FakeCudaTensor) for t in checked)
    device = kwargs.get("device")
    if has_fake:
        scalar_ok = _python_scalar_ok(func)
        for t in checked:
            if not isinstance(t, FakeCudaTensor) and (t.dim() > 0 or not scalar_ok):
                raise _same_device_error(func, t)
    out_cuda = _is_cuda(device) if device is not None else any(isinstance(t, FakeCudaTensor) for t in tensors)
    if out_cuda:
        _check_generators(tree_flatten((args, kwargs))[0])
    if device is not None and _is_cuda(device):
        kwargs = {**kwargs, "device": torch.device("cpu")}
    inputs: dict[int, torch.Tensor] = {}

    def unwrap(x):
        if isinstance(x, FakeCudaTensor):
            inputs[id(x.elem)] = x
            return x.elem
        if isinstance(x, torch.Tensor):
            inputs.setdefault(id(x), x)
        return x

    with torch._C.DisableTorchFunctionSubclass():
        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs))

    def wrap(x):
        if not isinstance(x, torch.Tensor):
            return x
        same = inputs.get(id(x))
        if same is not None:
            return same
        return FakeCudaTensor(x) if out_cuda else x

    return tree_map(wrap, out)


# --- methods and properties of a stand-in tensor that are not plain operations ---------------------

def _numpy(self, *args, **kwargs):
    raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                    "to host memory first.")


def _to(self, *args, **kwargs):
    device, dtype, _non_blocking, memory_format = torch._C._nn._parse_to(*args, **kwargs)
    copy = bool(kwargs.get("copy", False))
    dtype = dtype or self.dtype
    fmt = {} if memory_format is None else {"memory_format": memory_format}
    if device is None or _is_cuda(device):
        if device is not None:
            _check_cuda_index(device)
        if dtype == self.dtype and not copy and not fmt:
            return self
        return FakeCudaTensor(self.elem.to(dtype=dtype, copy=True, **fmt))
    return self.elem.to(dtype=dtype, copy=True, **fmt)  # to the host: always a new tensor


def _cpu(self, memory_format=torch.preserve_format):
    return self.elem.to(copy=True, memory_format=memory_format)


def _cuda(self, device=None, non_blocking=False, memory_format=torch.preserve_format):
    if device is not None:
        _check_cuda_index(device)
    return self


def _repr(self, *, tensor_contents=None):
    text = repr(self.elem)
    return text[:-1] + f", device='{self.device}')"


def _format(self, spec):
    if self.dim() == 0:
        return self.item().__format__(spec)
    return object.__format__(_repr(self), spec)


def _deepcopy(self, memo):
    if id(self) in memo:
        return memo[id(self)]
    new = FakeCudaTensor(self.elem.detach().clone().requires_grad_(self.elem.requires_grad))
    new.__dict__.update({k: v for k, v in self.__dict__.items() if k != "elem"})
    memo[id(self)] = new
    return new


def _rebuild(elem: torch.Tensor) -> torch.Tensor:
    """Unpickle a stand-in tensor (a plain CPU tensor where the stand-in is off)."""
    return FakeCudaTensor(elem) if _state.enabled else elem


def _reduce_ex(self, proto):
    return (_rebuild, (self.elem.detach(),))


def _requires_grad_(self, requires_grad=True):
    self.elem.requires_grad_(requires_grad)
    return self


def _set_requires_grad(self, value):
    self.elem.requires_grad = value


def _get_grad(self):
    g = self.elem.grad
    return None if g is None else FakeCudaTensor(g)


def _set_grad(self, value):
    if value is not None and not isinstance(value, FakeCudaTensor):
        raise RuntimeError("assigned grad has data located on a different device (cpu) than the tensor (cuda:0)")
    self.elem.grad = None if value is None else value.elem


def _del_grad(self):
    self.elem.grad = None


def _set_data(self, value):
    if isinstance(self, FakeCudaTensor) and isinstance(value, FakeCudaTensor):
        self.elem.data = value.elem
        return
    if isinstance(self, FakeCudaTensor) or isinstance(value, FakeCudaTensor):
        raise NotImplementedError("the CUDA stand-in does not model moving a tensor across devices through .data")
    with torch._C.DisableTorchFunctionSubclass():
        self.data = value


def _unwrap_all(tree):
    return tree_map(lambda x: x.elem if isinstance(x, FakeCudaTensor) else x, tree)


def _check_grad_pairs(outputs, grads) -> None:
    outs, gs = _tensors(outputs), [g for g in tree_flatten(grads)[0] if isinstance(g, torch.Tensor)]
    for o, g in zip(outs, gs):
        if isinstance(o, FakeCudaTensor) != isinstance(g, FakeCudaTensor):
            raise RuntimeError("Function backward returned a gradient on a different device than its output")


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    if gradient is not None:
        _check_grad_pairs([self], [gradient])
    self.elem.backward(_unwrap_all(gradient), retain_graph=retain_graph, create_graph=create_graph, inputs=_unwrap_all(inputs))


def _autograd_grad(outputs, inputs, grad_outputs=None, **kwargs):
    if grad_outputs is not None:
        _check_grad_pairs(outputs, grad_outputs)
    wrapped = [isinstance(t, FakeCudaTensor) for t in (inputs if isinstance(inputs, (list, tuple)) else [inputs])]
    with torch._C.DisableTorchFunctionSubclass():
        grads = torch.autograd.grad(_unwrap_all(outputs), _unwrap_all(inputs), _unwrap_all(grad_outputs), **kwargs)
    return tuple(FakeCudaTensor(g) if (w and g is not None) else g for g, w in zip(grads, wrapped))


def _autograd_backward(tensors, grad_tensors=None, **kwargs):
    if grad_tensors is not None:
        _check_grad_pairs(tensors, grad_tensors)
    with torch._C.DisableTorchFunctionSubclass():
        return torch.autograd.backward(_unwrap_all(tensors), _unwrap_all(grad_tensors), **{k: _unwrap_all(v) for k, v in kwargs.items()})


def _direct(fn):
    """A function that only reads the tensors' types or metadata: called as it is."""
    def call(*args, **kwargs):
        with torch._C.DisableTorchFunctionSubclass():
            return fn(*args, **kwargs)
    return call


def _unavailable(name):
    def refuse(self, *args, **kwargs):
        raise NotImplementedError(f"the CUDA stand-in does not model Tensor.{name}")
    return refuse


_T = torch.Tensor
#: properties that are operations (autograd records them): not answered by the wrapper
_OP_PROPERTIES = {"T", "mT", "H", "mH", "real", "imag"}


def _property_name(getter) -> str:
    return getattr(getattr(getter, "__self__", None), "__name__", "")


_METADATA = {_T.get_device, _T.dim, _T.size, _T.stride, _T.numel, _T.element_size, _T.is_contiguous,
             _T.is_floating_point, _T.is_complex, _T.storage_offset, _T.__len__, _T.nelement, _T.ndimension}
_SPECIAL = {
    _T.__getitem__: _getitem,
    _T.__setitem__: _setitem,
    # a stand-in tensor's numbers cannot be swapped into a CPU tensor's shell (nn.Module.to then
    # makes new parameters, as for any tensor subclass)
    torch._has_compatible_shallow_copy_type: lambda a, b: type(a) is type(b) and _direct(torch._has_compatible_shallow_copy_type)(a, b),
    _T.data.__set__: _set_data,
    _T.tolist: lambda self: self.elem.tolist(),
    _T.item: lambda self: self.elem.item(),
    _T.__float__: lambda self: float(self.elem),
    _T.__int__: lambda self: int(self.elem),
    _T.__index__: lambda self: self.elem.__index__(),
    _T.__complex__: lambda self: complex(self.elem),
    _T.new_tensor: _new_tensor,
    _T.copy_: _copy_,
    _T.numpy: _numpy,
    _T.__array__: _numpy,
    _T.to: _to,
    _T.cpu: _cpu,
    _T.cuda: _cuda,
    _T.__repr__: _repr,
    _T.__format__: _format,
    _T.__deepcopy__: _deepcopy,
    _T.__reduce_ex__: _reduce_ex,
    _T.requires_grad_: _requires_grad_,
    _T.requires_grad.__get__: lambda self: self.elem.requires_grad,
    _T.requires_grad.__set__: _set_requires_grad,
    _T.grad.__get__: _get_grad,
    _T.grad.__set__: _set_grad,
    _T.grad.__delete__: _del_grad,
    _T.grad_fn.__get__: lambda self: self.elem.grad_fn,
    _T.is_leaf.__get__: lambda self: self.elem.is_leaf,
    _T.retains_grad.__get__: lambda self: self.elem.retains_grad,
    _T.retain_grad: lambda self: self.elem.retain_grad(),
    _T.detach: lambda self: FakeCudaTensor(self.elem.detach()),
    _T.data.__get__: lambda self: FakeCudaTensor(self.elem.detach()),
    _T.backward: _backward,
    torch.autograd.grad: _autograd_grad,
    torch.autograd.backward: _autograd_backward,
    _T.data_ptr: _unavailable("data_ptr"),
    _T.untyped_storage: _unavailable("untyped_storage"),
    _T.share_memory_: _unavailable("share_memory_"),
    _T.pin_memory: _unavailable("pin_memory"),
    _T.register_hook: _unavailable("register_hook"),
}


# --- the mode: device="cuda" anywhere makes stand-in tensors ------------------------------------------

class _FakeCudaMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (_T.to, _T.cuda) and args and type(args[0]) is not FakeCudaTensor and isinstance(args[0], torch.Tensor):
            return _plain_to(func, args, kwargs)
        if func in (torch.tensor, torch.as_tensor) and args and isinstance(args[0], (list, tuple)):
            # a sequence of CUDA scalars is read element by element (as .item() does)
            args = (_unwrap_all(args[0]), *args[1:])
        device = kwargs.get("device")
        if device is not None and not isinstance(device, torch.Tensor) and _is_cuda(device):
            _touch()
            _check_cuda_index(device)
            _check_generators(tree_flatten((args, kwargs))[0])
            out = func(*args, **{**kwargs, "device": torch.device("cpu")})
            return tree_map(lambda x: FakeCudaTensor(x) if type(x) is torch.Tensor or type(x) is torch.nn.Parameter else x, out)
        return func(*args, **kwargs)


def _plain_to(func, args, kwargs):
    """``Tensor.to`` / ``Tensor.cuda`` of a CPU tensor."""
    self = args[0]
    if func is _T.cuda:
        device = kwargs.get("device", args[1] if len(args) > 1 else None)
        device, dtype, fmt, copy = (device if device is not None else CUDA), None, kwargs.get("memory_format"), True
    else:
        device, dtype, _non_blocking, fmt = torch._C._nn._parse_to(*args[1:], **kwargs)
        copy = bool(kwargs.get("copy", False))
    if device is None or not _is_cuda(device):
        return func(*args, **kwargs)
    _check_cuda_index(device)
    extra = {} if fmt is None else {"memory_format": fmt}
    del copy  # to another device: always a new tensor
    return FakeCudaTensor(self.to(dtype=dtype or self.dtype, copy=True, **extra))


# --- torch.cuda, torch.save / torch.load ----------------------------------------------------------------

def _initialising(value_fn):
    def call(*args, **kwargs):
        _touch()
        return value_fn(*args, **kwargs)
    return call


_PROPERTIES = types.SimpleNamespace(name="CUDA stand-in (CPU)", total_memory=_TOTAL_MEMORY, major=7, minor=5,
                                    multi_processor_count=40, is_integrated=False, is_multi_gpu_board=False)


def _save(obj, f, *args, **kwargs):
    obj = tree_map(lambda x: x.elem.detach() if isinstance(x, FakeCudaTensor) else x, obj)
    return _state.saved[(torch, "save")](obj, f, *args, **kwargs)


def _load(f, map_location=None, *args, **kwargs):
    load = _state.saved[(torch, "load")]
    if isinstance(map_location, (str, torch.device, int)) and _is_cuda(map_location):
        _touch()
        _check_cuda_index(map_location)
        obj = load(f, *args, map_location="cpu", **kwargs)
        return tree_map(lambda x: FakeCudaTensor(x) if type(x) is torch.Tensor else x, obj)
    return load(f, map_location, *args, **kwargs)


def _patches() -> dict[tuple[Any, str], Any]:
    cuda = torch.cuda
    return {
        (cuda, "is_available"): lambda: True,
        (cuda, "device_count"): lambda: 1,
        (cuda, "is_initialized"): lambda: _state.initialised and not _state.bad_fork,
        (cuda, "current_device"): _initialising(lambda: 0),
        (cuda, "set_device"): _initialising(lambda device: _check_cuda_index(device)),
        (cuda, "synchronize"): _initialising(lambda device=None: None),
        (cuda, "mem_get_info"): _initialising(lambda device=None: (_FREE_MEMORY, _TOTAL_MEMORY)),
        (cuda, "get_device_properties"): _initialising(lambda device=None: _PROPERTIES),
        (cuda, "get_device_name"): _initialising(lambda device=None: _PROPERTIES.name),
        (cuda, "get_device_capability"): _initialising(lambda device=None: (_PROPERTIES.major, _PROPERTIES.minor)),
        (cuda, "manual_seed"): lambda seed: None,
        (cuda, "manual_seed_all"): lambda seed: None,
        (cuda, "empty_cache"): lambda: None,
        (cuda, "memory_allocated"): lambda device=None: 0,
        (cuda, "max_memory_allocated"): lambda device=None: 0,
        (cuda, "reset_peak_memory_stats"): lambda device=None: None,
        (torch, "save"): _save,
        (torch, "load"): _load,
    }


def enable() -> None:
    """Turn the stand-in on in this process (idempotent)."""
    if _state.enabled:
        return
    for (owner, name), value in _patches().items():
        _state.saved[(owner, name)] = getattr(owner, name)
        setattr(owner, name, value)
    _state.mode = _FakeCudaMode()
    _state.mode.__enter__()
    _state.enabled = True


def disable() -> None:
    """Turn the stand-in off (stand-in tensors made meanwhile keep their rules)."""
    if not _state.enabled:
        return
    _state.mode.__exit__(None, None, None)
    _state.mode = None
    for (owner, name), value in _state.saved.items():
        setattr(owner, name, value)
    _state.saved = {}
    _state.enabled = False


def enabled() -> bool:
    return _state.enabled


@contextlib.contextmanager
def fake_cuda() -> Iterator[None]:
    """``with fake_cuda(): ...``: the stand-in on inside the block (left on if it was on)."""
    was = _state.enabled
    enable()
    try:
        yield
    finally:
        if not was:
            disable()
