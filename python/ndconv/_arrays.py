"""Array plumbing of the package: which library an array belongs to (numpy, CuPy, PyTorch), where
it lives, the caller's CUDA stream, and the float32 arrays the engine reads and writes. No
filtering decision is made here: the engine decides (ndconv._ndconv)."""

from __future__ import annotations

import numpy as np

from . import _ndconv

# The dtypes the engine reads as they are (ndconv/stored.h); 64-bit integers and float16 are
# converted to float64 first (documented in docs/python.md).
_ENGINE_DTYPES = frozenset(np.dtype(t) for t in ("uint8", "int8", "uint16", "int16", "uint32",
                                                 "int32", "float32", "float64"))
_WIDENED_DTYPES = frozenset(np.dtype(t) for t in ("int64", "uint64", "float16"))


def _library(array) -> str:
    module = type(array).__module__
    if module.startswith("cupy"):
        return "cupy"
    if module.startswith("torch"):
        return "torch"
    return "numpy"


def _check_dtype(dtype: np.dtype, what: str) -> None:
    if dtype not in _ENGINE_DTYPES and dtype not in _WIDENED_DTYPES:
        raise TypeError(f"ndconv filters integer and floating-point values; the {what} holds "
                        f"{dtype}")


def _torch_dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


class Operand:
    """An input array as the engine will see it, and how to hand results back in its kind.

    numpy arrays (and anything numpy takes) and CPU tensors are host arrays; CuPy arrays and CUDA
    tensors are filtered where they are, on the caller's current stream."""

    def __init__(self, array, name: str = "input"):
        library = _library(array)
        self.return_tensor = False  # a CPU tensor: work on its numpy view, give a tensor back
        if library == "torch":
            import torch

            self.torch = torch
            if array.is_complex() or array.dtype == torch.bool:
                raise TypeError(f"ndconv filters integer and floating-point values; the {name} "
                                f"holds {array.dtype}")
            if array.device.type == "cuda":
                self.on_gpu, self.device, self.array = True, array.device.index or 0, array
                self.dtype = np.dtype(_torch_dtype_name(array.dtype))
            elif array.device.type == "cpu":
                library, self.return_tensor = "numpy", True
                self.on_gpu, self.device = False, 0
                self.array = array.detach().numpy()
                self.dtype = self.array.dtype
            else:
                raise ValueError(f"ndconv filters tensors on the CPU or a CUDA GPU, not on "
                                 f"{array.device.type}")
        elif library == "cupy":
            self.on_gpu, self.device, self.array = True, array.device.id, array
            self.dtype = np.dtype(array.dtype)
        else:
            self.on_gpu, self.device = False, 0
            self.array = np.asarray(array)
            self.dtype = self.array.dtype
        self.library = library
        _check_dtype(self.dtype, name)
        self.shape = tuple(int(n) for n in self.array.shape)
        self.ndim = len(self.shape)
        self.empty = any(n == 0 for n in self.shape)  # nothing to filter: scipy returns it as is
        if self.ndim == 0:
            raise ValueError(f"ndconv filters arrays of 1 to 4 axes; the {name} is 0-d")

    # ---- what the engine reads -----------------------------------------------------------------
    def engine_input(self, float32: bool = False):
        """The input as the engine reads it (readable)."""
        return self.readable(self.array, float32)

    def readable(self, a, float32: bool = False):
        """An array of this operand's kind as the engine reads it: on the host any engine dtype
        with non-negative strides (others are copied, 64-bit integers and float16 to float64); on
        a GPU, or where `float32`, contiguous float32."""
        if self.on_gpu:
            return self.device_float32(a)
        if float32:
            return np.ascontiguousarray(a, dtype=np.float32)
        if a.dtype in _WIDENED_DTYPES:
            return np.ascontiguousarray(a, dtype=np.float64)
        if any(s < 0 for s in a.strides) or not a.flags.aligned:
            return np.ascontiguousarray(a)
        return a

    def device_float32(self, a):
        """A GPU array as the engine reads it: contiguous float32 (converted by its own library)."""
        if self.library == "cupy":
            if a.dtype == np.float32 and a.flags.c_contiguous:
                return a
            import cupy

            return cupy.ascontiguousarray(a, dtype=cupy.float32)
        if a.dtype == self.torch.float32 and a.is_contiguous():
            return a
        return a.to(self.torch.float32).contiguous()

    def address(self, a) -> int:
        """The device address of a contiguous GPU array of this operand's library."""
        return a.data.ptr if self.library == "cupy" else a.data_ptr()

    def empty_float32(self, shape=None):
        """A new float32 array on the input's device."""
        return self._empty(self.shape if shape is None else tuple(shape), np.dtype(np.float32))

    def settings(self, mode: str, cval: float, device: str, threads: int):
        """The binding's call settings; for a GPU array, the caller's current stream."""
        s = _ndconv.CallSettings()
        s.boundary = mode
        s.boundary_value = float(cval)
        s.device = device
        s.threads = int(threads)
        if self.on_gpu:
            s.want_report = False
            if self.library == "cupy":
                import cupy

                if cupy.cuda.runtime.getDevice() == self.device:
                    s.stream = cupy.cuda.get_current_stream().ptr
                else:
                    with cupy.cuda.Device(self.device):
                        s.stream = cupy.cuda.get_current_stream().ptr
            else:
                s.stream = self.torch.cuda.current_stream(self.array.device).cuda_stream
        return s

    # ---- results ---------------------------------------------------------------------------------
    def output(self, output, shape=None):
        """The caller's output: an array to write into (checked), or a new array of the dtype
        asked for (default: the input's)."""
        shape = self.shape if shape is None else tuple(shape)
        if output is None:
            return self._empty(shape, self.dtype)
        if self._is_dtype(output):
            return self._empty(shape, self._dtype_of(output))
        library = _library(output)
        if library == "torch" and output.device.type == "cpu" and self.library == "numpy":
            output = output.detach().numpy()
            library = "numpy"
        if library != self.library:
            raise TypeError(f"the output is a {library} array and the input a {self.library} "
                            f"array")
        if tuple(output.shape) != shape:
            raise ValueError(f"the output's shape {tuple(output.shape)} is not the input's "
                             f"{shape}")
        if library == "numpy":
            if not isinstance(output, np.ndarray):
                raise TypeError("output must be a numpy array or a dtype")
            if not output.flags.writeable:
                raise ValueError("the output array is read-only")
        elif library == "cupy":
            if output.device.id != self.device:
                raise ValueError(f"the output is on GPU {output.device.id}, the input on GPU "
                                 f"{self.device}")
        elif output.device != self.array.device:
            raise ValueError(f"the output is on {output.device}, the input on {self.array.device}")
        self._dtype_of(output.dtype)
        return output

    def _is_dtype(self, what) -> bool:
        if isinstance(what, (type, str, np.dtype)):
            return True
        return self.library == "torch" and isinstance(what, self.torch.dtype)

    def _dtype_of(self, what) -> np.dtype:
        if self.library == "torch" and isinstance(what, self.torch.dtype):
            what = _torch_dtype_name(what)
        try:
            dtype = np.dtype(what)
        except TypeError:
            raise TypeError(f"output must be an array or a dtype, not {what!r}") from None
        _check_dtype(dtype, "output")
        return dtype

    def _empty(self, shape, dtype: np.dtype):
        dtype = self._dtype_of(dtype)
        if not self.on_gpu:
            return np.empty(shape, dtype=dtype)
        if self.library == "cupy":
            import cupy

            if cupy.cuda.runtime.getDevice() == self.device:
                return cupy.empty(shape, dtype=dtype)
            with cupy.cuda.Device(self.device):
                return cupy.empty(shape, dtype=dtype)
        return self.torch.empty(shape, dtype=getattr(self.torch, dtype.name),
                                device=self.array.device)

    def float32_target(self, output):
        """`output` itself where the engine can write it (float32, non-negative strides, no memory
        shared with the input), else a new float32 array."""
        if self._engine_writable(output):
            return output
        return self.empty_float32(output.shape)

    def _engine_writable(self, output) -> bool:
        if self.library == "numpy":
            return (output.dtype == np.float32 and all(s >= 0 for s in output.strides) and
                    output.flags.aligned and not np.may_share_memory(output, self.array))
        if self.library == "cupy":
            return (output.dtype == np.float32 and output.flags.c_contiguous and
                    not _overlap(output.data.ptr, output.nbytes, self.array.data.ptr,
                                 self.array.nbytes))
        return (output.dtype == self.torch.float32 and output.is_contiguous() and
                not _overlap(output.data_ptr(), output.numel() * output.element_size(),
                             self.array.data_ptr(), self.array.numel() * self.array.element_size()))

    def cast_into(self, result, output):
        """Writes the float32 `result` into `output` as scipy casts (C casts: truncation towards
        zero for integers)."""
        if result is output:
            return
        if self.library == "numpy":
            np.copyto(output, result, casting="unsafe")
        elif self.library == "cupy":
            output[...] = result
        else:
            output.copy_(result)

    def give_back(self, output):
        """What the caller receives: a tensor for a CPU tensor input, else `output`."""
        if self.return_tensor and isinstance(output, np.ndarray):
            return self.torch.from_numpy(output)
        return output


def _overlap(a, a_bytes, b, b_bytes) -> bool:
    """Whether two device address ranges overlap (a strided array's range may exceed its bytes;
    the GPU path sees only contiguous arrays)."""
    return a < b + b_bytes and b < a + a_bytes
