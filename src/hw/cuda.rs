//! The CUDA driver API, loaded at run time (`libcuda.so.1` through
//! `dlopen`): litmix builds and runs where no CUDA is installed, and only
//! `litmix hw run` asks for the driver. Only the handful of entry points
//! the harness needs are bound. `LITMIX_LIBCUDA` names another library
//! file (tests point it at a missing file to check the no-driver path).

use libloading::Library;
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::sync::Arc;

type CuResult = c_int;
type CuDevice = c_int;
type CuContext = *mut c_void;
type CuModule = *mut c_void;
type CuFunction = *mut c_void;
type CuLinkState = *mut c_void;
/// A device address.
pub type DevicePtr = u64;

const CU_JIT_INFO_LOG_BUFFER: c_int = 3;
const CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: c_int = 4;
const CU_JIT_ERROR_LOG_BUFFER: c_int = 5;
const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;
const CU_JIT_INPUT_PTX: c_int = 1;
const ATTR_MULTIPROCESSOR_COUNT: c_int = 16;
const ATTR_CC_MAJOR: c_int = 75;
const ATTR_CC_MINOR: c_int = 76;
const LOG_SIZE: usize = 16 * 1024;

/// Why the driver could not be used: no library (exit 2 at the CLI), no
/// device, or a failed call with the driver's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CudaError {
    /// `libcuda` could not be loaded or lacks an entry point.
    NoDriver(String),
    /// The driver loaded but sees no device.
    NoDevice(String),
    /// A call failed: which call, the error code and the driver's text
    /// (with the JIT log for compilation errors).
    Call(String),
}

impl std::fmt::Display for CudaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CudaError::NoDriver(s) => write!(f, "no CUDA driver: {s}"),
            CudaError::NoDevice(s) => write!(f, "no CUDA device: {s}"),
            CudaError::Call(s) => f.write_str(s),
        }
    }
}

macro_rules! api {
    ($($name:ident : fn($($arg:ty),*);)*) => {
        #[allow(non_snake_case)]
        struct Api {
            _lib: Library,
            $($name: unsafe extern "C" fn($($arg),*) -> CuResult,)*
        }
        impl Api {
            #[allow(non_snake_case)]
            fn load(lib: Library) -> Result<Api, CudaError> {
                // SAFETY: each symbol is a C function of the CUDA driver API
                // with the signature declared here (driver API reference).
                unsafe {
                    $(let $name = *lib
                        .get::<unsafe extern "C" fn($($arg),*) -> CuResult>(concat!(stringify!($name), "\0").as_bytes())
                        .map_err(|e| CudaError::NoDriver(format!("{}: {e}", stringify!($name))))?;)*
                    Ok(Api { _lib: lib, $($name,)* })
                }
            }
        }
    };
}

api! {
    cuInit: fn(c_uint);
    cuDeviceGetCount: fn(*mut c_int);
    cuDeviceGet: fn(*mut CuDevice, c_int);
    cuDeviceGetName: fn(*mut c_char, c_int, CuDevice);
    cuDeviceGetAttribute: fn(*mut c_int, c_int, CuDevice);
    cuDevicePrimaryCtxRetain: fn(*mut CuContext, CuDevice);
    cuCtxSetCurrent: fn(CuContext);
    cuLinkCreate_v2: fn(c_uint, *mut c_int, *mut *mut c_void, *mut CuLinkState);
    cuLinkAddData_v2: fn(CuLinkState, c_int, *mut c_void, usize, *const c_char, c_uint, *mut c_int, *mut *mut c_void);
    cuLinkComplete: fn(CuLinkState, *mut *mut c_void, *mut usize);
    cuLinkDestroy: fn(CuLinkState);
    cuModuleLoadDataEx: fn(*mut CuModule, *const c_void, c_uint, *mut c_int, *mut *mut c_void);
    cuModuleGetFunction: fn(*mut CuFunction, CuModule, *const c_char);
    cuModuleUnload: fn(CuModule);
    cuMemAlloc_v2: fn(*mut DevicePtr, usize);
    cuMemFree_v2: fn(DevicePtr);
    cuMemcpyHtoD_v2: fn(DevicePtr, *const c_void, usize);
    cuMemcpyDtoH_v2: fn(*mut c_void, DevicePtr, usize);
    cuLaunchKernel: fn(CuFunction, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, *mut c_void, *mut *mut c_void, *mut *mut c_void);
    cuCtxSynchronize: fn();
    cuMemHostAlloc: fn(*mut *mut c_void, usize, c_uint);
    cuMemHostGetDevicePointer_v2: fn(*mut DevicePtr, *mut c_void, c_uint);
    cuMemFreeHost: fn(*mut c_void);
    cuGetErrorString: fn(c_int, *mut *const c_char);
}

/// An open device with a current context.
pub struct Device {
    api: Arc<Api>,
    /// The device's name (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// Compute capability (major, minor).
    pub capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sms: i32,
}

impl Device {
    /// Loads the driver and opens device `index`.
    pub fn open(index: i32) -> Result<Device, CudaError> {
        let path = std::env::var("LITMIX_LIBCUDA").ok();
        let names: Vec<String> = match &path {
            Some(p) => vec![p.clone()],
            None => vec!["libcuda.so.1".into(), "libcuda.so".into()],
        };
        let mut last = String::new();
        let mut lib = None;
        for n in &names {
            // SAFETY: loading the CUDA driver runs its initialisers, which
            // is what every CUDA program does.
            match unsafe { Library::new(n) } {
                Ok(l) => {
                    lib = Some(l);
                    break;
                }
                Err(e) => {
                    let cause = std::error::Error::source(&e)
                        .map(|c| format!(" ({c})"))
                        .unwrap_or_default();
                    last = format!("cannot load {n}: {e}{cause}");
                }
            }
        }
        let Some(lib) = lib else {
            return Err(CudaError::NoDriver(last));
        };
        let api = Arc::new(Api::load(lib)?);
        let d = Device {
            api,
            name: String::new(),
            capability: (0, 0),
            sms: 0,
        };
        // SAFETY: plain driver calls with valid out-pointers.
        unsafe {
            let r = (d.api.cuInit)(0);
            if r != 0 {
                return Err(CudaError::NoDevice(d.message("cuInit", r)));
            }
            let mut n = 0;
            d.check("cuDeviceGetCount", (d.api.cuDeviceGetCount)(&mut n))?;
            if index >= n {
                return Err(CudaError::NoDevice(format!(
                    "the driver sees {n} device(s), asked for device {index}"
                )));
            }
            let mut dev = 0;
            d.check("cuDeviceGet", (d.api.cuDeviceGet)(&mut dev, index))?;
            let mut buf = [0 as c_char; 256];
            d.check(
                "cuDeviceGetName",
                (d.api.cuDeviceGetName)(buf.as_mut_ptr(), 255, dev),
            )?;
            let name = CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
            let attr = |a: c_int| -> Result<i32, CudaError> {
                let mut v = 0;
                d.check(
                    "cuDeviceGetAttribute",
                    (d.api.cuDeviceGetAttribute)(&mut v, a, dev),
                )?;
                Ok(v)
            };
            let capability = (attr(ATTR_CC_MAJOR)?, attr(ATTR_CC_MINOR)?);
            let sms = attr(ATTR_MULTIPROCESSOR_COUNT)?;
            let mut ctx = std::ptr::null_mut();
            d.check(
                "cuDevicePrimaryCtxRetain",
                (d.api.cuDevicePrimaryCtxRetain)(&mut ctx, dev),
            )?;
            d.check("cuCtxSetCurrent", (d.api.cuCtxSetCurrent)(ctx))?;
            Ok(Device {
                name,
                capability,
                sms,
                ..d
            })
        }
    }

    fn message(&self, call: &str, r: CuResult) -> String {
        let mut p: *const c_char = std::ptr::null();
        // SAFETY: the driver returns a static string or leaves p null.
        let text = unsafe {
            (self.api.cuGetErrorString)(r, &mut p);
            if p.is_null() {
                "unknown error".to_string()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        format!("{call} failed: error {r} ({text})")
    }

    fn check(&self, call: &str, r: CuResult) -> Result<(), CudaError> {
        if r == 0 {
            Ok(())
        } else {
            Err(CudaError::Call(self.message(call, r)))
        }
    }

    /// Compiles PTX with the driver's JIT (ptxas at its default -O3) into
    /// a cubin: the image both run and disassembled, so the SASS checked
    /// is the code run. Errors carry the JIT's log.
    pub fn compile(&self, ptx: &str) -> Result<Vec<u8>, CudaError> {
        let src = CString::new(ptx).map_err(|e| CudaError::Call(format!("PTX text: {e}")))?;
        let mut err_log = vec![0u8; LOG_SIZE];
        let mut info_log = vec![0u8; LOG_SIZE];
        let mut opts = [
            CU_JIT_ERROR_LOG_BUFFER,
            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
            CU_JIT_INFO_LOG_BUFFER,
            CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut vals: [*mut c_void; 4] = [
            err_log.as_mut_ptr().cast(),
            LOG_SIZE as *mut c_void,
            info_log.as_mut_ptr().cast(),
            LOG_SIZE as *mut c_void,
        ];
        let log = |buf: &[u8]| {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            String::from_utf8_lossy(&buf[..end]).trim().to_string()
        };
        // SAFETY: the option arrays outlive the link state; the cubin is
        // copied out before cuLinkDestroy frees it.
        unsafe {
            let mut state = std::ptr::null_mut();
            self.check(
                "cuLinkCreate",
                (self.api.cuLinkCreate_v2)(4, opts.as_mut_ptr(), vals.as_mut_ptr(), &mut state),
            )?;
            let name = c"litmix.ptx";
            let r = (self.api.cuLinkAddData_v2)(
                state,
                CU_JIT_INPUT_PTX,
                src.as_ptr() as *mut c_void,
                src.as_bytes_with_nul().len(),
                name.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            if r != 0 {
                (self.api.cuLinkDestroy)(state);
                return Err(CudaError::Call(format!(
                    "{}\n{}",
                    self.message("PTX JIT (cuLinkAddData)", r),
                    log(&err_log)
                )));
            }
            let mut cubin: *mut c_void = std::ptr::null_mut();
            let mut size = 0usize;
            let r = (self.api.cuLinkComplete)(state, &mut cubin, &mut size);
            if r != 0 {
                (self.api.cuLinkDestroy)(state);
                return Err(CudaError::Call(format!(
                    "{}\n{}",
                    self.message("cuLinkComplete", r),
                    log(&err_log)
                )));
            }
            let image = std::slice::from_raw_parts(cubin as *const u8, size).to_vec();
            (self.api.cuLinkDestroy)(state);
            Ok(image)
        }
    }

    /// Loads a cubin and looks its kernels up by name.
    pub fn load(&self, cubin: &[u8], kernels: &[&str]) -> Result<Module, CudaError> {
        // SAFETY: the image is a cubin from `compile`; names are C strings.
        unsafe {
            let mut m = std::ptr::null_mut();
            self.check(
                "cuModuleLoadDataEx",
                (self.api.cuModuleLoadDataEx)(
                    &mut m,
                    cubin.as_ptr().cast(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                ),
            )?;
            let mut functions = Vec::new();
            for k in kernels {
                let c = CString::new(*k).map_err(|e| CudaError::Call(e.to_string()))?;
                let mut f = std::ptr::null_mut();
                self.check(
                    "cuModuleGetFunction",
                    (self.api.cuModuleGetFunction)(&mut f, m, c.as_ptr()),
                )?;
                functions.push(f);
            }
            Ok(Module {
                api: self.api.clone(),
                module: m,
                functions,
            })
        }
    }

    /// Allocates `words` 32-bit words of device memory.
    pub fn alloc(&self, words: usize) -> Result<Buffer, CudaError> {
        let mut p = 0;
        // SAFETY: a plain allocation.
        self.check("cuMemAlloc", unsafe {
            (self.api.cuMemAlloc_v2)(&mut p, words.max(1) * 4)
        })?;
        Ok(Buffer {
            api: self.api.clone(),
            ptr: p,
            words: words.max(1),
        })
    }

    /// Allocates `words` 32-bit words of pinned host memory mapped into
    /// the device's address space (`cuMemHostAlloc` with
    /// `CU_MEMHOSTALLOC_DEVICEMAP | PORTABLE`), zeroed: the memory that
    /// host threads and kernels of a compound run share.
    pub fn alloc_mapped(&self, words: usize) -> Result<MappedBuffer, CudaError> {
        const PORTABLE_DEVICEMAP: c_uint = 0x01 | 0x02;
        let words = words.max(1);
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: a plain allocation; the pointer is checked below.
        self.check("cuMemHostAlloc", unsafe {
            (self.api.cuMemHostAlloc)(&mut host, words * 4, PORTABLE_DEVICEMAP)
        })?;
        let mut buf = MappedBuffer {
            api: self.api.clone(),
            host: host.cast(),
            dev: 0,
            words,
        };
        // SAFETY: `host` holds `words` words just allocated.
        unsafe { std::ptr::write_bytes(buf.host, 0, words) };
        // SAFETY: `host` was allocated with DEVICEMAP.
        self.check("cuMemHostGetDevicePointer", unsafe {
            (self.api.cuMemHostGetDevicePointer_v2)(&mut buf.dev, host, 0)
        })?;
        Ok(buf)
    }

    /// Copies `data` to the start of `buf`.
    pub fn upload(&self, buf: &Buffer, data: &[u32]) -> Result<(), CudaError> {
        assert!(data.len() <= buf.words);
        // SAFETY: the buffer holds at least data.len() words.
        self.check("cuMemcpyHtoD", unsafe {
            (self.api.cuMemcpyHtoD_v2)(buf.ptr, data.as_ptr().cast(), data.len() * 4)
        })
    }

    /// Copies the first `out.len()` words of `buf` into `out`.
    pub fn download(&self, buf: &Buffer, out: &mut [u32]) -> Result<(), CudaError> {
        assert!(out.len() <= buf.words);
        // SAFETY: the buffer holds at least out.len() words.
        self.check("cuMemcpyDtoH", unsafe {
            (self.api.cuMemcpyDtoH_v2)(out.as_mut_ptr().cast(), buf.ptr, out.len() * 4)
        })
    }

    /// Waits for every launch queued so far; a kernel's fault shows here.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: a plain driver call.
        self.check("cuCtxSynchronize", unsafe { (self.api.cuCtxSynchronize)() })
    }

    /// Queues kernel `k` of `m` on `blocks × threads` with `args` (each a
    /// device pointer or a 32-bit word, in the kernel's order) on the
    /// default stream without waiting:
    /// later launches and copies on that stream run after it (a copy to
    /// the host waits for it), so a launch loop pays one wait per round.
    pub fn launch_async(
        &self,
        m: &Module,
        k: usize,
        blocks: u32,
        threads: u32,
        args: &[Arg],
    ) -> Result<(), CudaError> {
        let mut store: Vec<u64> = args
            .iter()
            .map(|a| match a {
                Arg::Ptr(p) => *p,
                Arg::U32(v) => u64::from(*v),
            })
            .collect();
        // Each parameter points at its value; a u32 is the low half of its
        // u64 slot (little-endian x86-64 and aarch64 hosts).
        let mut ptrs: Vec<*mut c_void> = store
            .iter_mut()
            .map(|v| (v as *mut u64).cast::<c_void>())
            .collect();
        // SAFETY: the parameter pointers outlive the call; sizes match the
        // kernel's .u64/.u32 parameters.
        unsafe {
            self.check(
                "cuLaunchKernel",
                (self.api.cuLaunchKernel)(
                    m.functions[k],
                    blocks,
                    1,
                    1,
                    threads,
                    1,
                    1,
                    0,
                    std::ptr::null_mut(),
                    ptrs.as_mut_ptr(),
                    std::ptr::null_mut(),
                ),
            )
        }
    }
}

/// A kernel argument.
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    /// A `.u64` device pointer.
    Ptr(DevicePtr),
    /// A `.u32` value.
    U32(u32),
}

/// A loaded module and its kernels, in the order asked for.
pub struct Module {
    api: Arc<Api>,
    module: CuModule,
    functions: Vec<CuFunction>,
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: the module was loaded by this driver and is unloaded once.
        unsafe {
            (self.api.cuModuleUnload)(self.module);
        }
    }
}

/// Pinned host memory of 32-bit words mapped into the device (freed on
/// drop): `host` for host threads, `dev` for kernels.
pub struct MappedBuffer {
    api: Arc<Api>,
    /// The host address.
    pub host: *mut u32,
    /// The device address of the same memory.
    pub dev: DevicePtr,
    /// Its size in words.
    pub words: usize,
}

// SAFETY: the memory is shared by design (host threads and kernels access
// it concurrently through volatile or inline-assembly accesses).
unsafe impl Send for MappedBuffer {}
unsafe impl Sync for MappedBuffer {}

impl Drop for MappedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc and freed once.
        unsafe {
            (self.api.cuMemFreeHost)(self.host.cast());
        }
    }
}

/// Device memory of 32-bit words, freed on drop.
pub struct Buffer {
    api: Arc<Api>,
    /// The device address.
    pub ptr: DevicePtr,
    /// Its size in words.
    pub words: usize,
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc and freed once.
        unsafe {
            (self.api.cuMemFree_v2)(self.ptr);
        }
    }
}
