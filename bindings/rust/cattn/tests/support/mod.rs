// SPDX-License-Identifier: Apache-2.0
//! Shared test support: the conformance vectors and host integer tensors of either index
//! dtype, compact or strided, with poisoned storage so that "nothing written" is visible.

#![allow(dead_code)]

pub mod json;

use std::path::PathBuf;

use std::ffi::c_void;

use cattn::{DataType, Device, TensorMut, TensorRef};
use json::Json;

/// The repository's tests/vectors directory.
pub fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/vectors")
}

/// The cases of tests/vectors/<utility>.json (checking the file names its utility).
pub fn load_cases(utility: &str) -> Vec<Json> {
    let path = vectors_dir().join(format!("{utility}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let doc = json::parse(&text);
    assert_eq!(doc.get("utility").str(), utility);
    let cases = doc.get("cases").array().to_vec();
    assert!(!cases.is_empty(), "{utility}: no cases");
    cases
}

/// Written where a test expects the library to leave storage alone.
pub const POISON: i64 = -7777;

/// An index dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Int {
    I32,
    I64,
}

pub const BOTH: [Int; 2] = [Int::I32, Int::I64];

impl Int {
    pub fn other(self) -> Int {
        match self {
            Int::I32 => Int::I64,
            Int::I64 => Int::I32,
        }
    }

    pub fn named(name: &str) -> Int {
        match name {
            "int32" => Int::I32,
            "int64" => Int::I64,
            other => panic!("unknown dtype {other}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Storage {
    I32(Vec<i32>),
    I64(Vec<i64>),
}

/// A host integer tensor: `shape`, row-major, every element `step` storage elements apart (so
/// step 1 is compact and viewed without strides, step > 1 strided).
#[derive(Clone, Debug, PartialEq)]
pub struct HostInts {
    storage: Storage,
    shape: Vec<i64>,
    step: i64,
}

impl HostInts {
    /// A tensor of `shape` with every storage element POISON.
    pub fn new(shape: &[i64], dtype: Int, step: i64) -> HostInts {
        let numel: i64 = shape.iter().product();
        let len = if numel == 0 {
            0
        } else {
            (numel - 1) * step + 1
        } as usize;
        let storage = match dtype {
            Int::I32 => Storage::I32(vec![POISON as i32; len]),
            Int::I64 => Storage::I64(vec![POISON; len]),
        };
        HostInts {
            storage,
            shape: shape.to_vec(),
            step,
        }
    }

    /// A 1-D tensor of these values.
    pub fn of(values: &[i64], dtype: Int, step: i64) -> HostInts {
        HostInts::shaped(values, &[values.len() as i64], dtype, step)
    }

    /// A tensor of `shape` holding `values` row-major.
    pub fn shaped(values: &[i64], shape: &[i64], dtype: Int, step: i64) -> HostInts {
        let mut t = HostInts::new(shape, dtype, step);
        assert_eq!(values.len() as i64, shape.iter().product::<i64>());
        for (i, &v) in values.iter().enumerate() {
            let at = i * step as usize;
            match &mut t.storage {
                Storage::I32(s) => {
                    s[at] = i32::try_from(v).unwrap_or_else(|_| panic!("{v} does not fit i32"))
                }
                Storage::I64(s) => s[at] = v,
            }
        }
        t
    }

    fn strides(&self) -> Vec<i64> {
        let mut strides = vec![0i64; self.shape.len()];
        let mut acc = self.step;
        for d in (0..self.shape.len()).rev() {
            strides[d] = acc;
            acc *= self.shape[d];
        }
        strides
    }

    pub fn view(&self) -> TensorRef<'_> {
        let strides = self.strides();
        let made = match (&self.storage, self.step) {
            (Storage::I32(s), 1) => TensorRef::new(s, &self.shape),
            (Storage::I64(s), 1) => TensorRef::new(s, &self.shape),
            (Storage::I32(s), _) => TensorRef::strided(s, &self.shape, &strides),
            (Storage::I64(s), _) => TensorRef::strided(s, &self.shape, &strides),
        };
        made.expect("a valid test view")
    }

    pub fn view_mut(&mut self) -> TensorMut<'_> {
        let strides = self.strides();
        let made = match (&mut self.storage, self.step) {
            (Storage::I32(s), 1) => TensorMut::new(s, &self.shape),
            (Storage::I64(s), 1) => TensorMut::new(s, &self.shape),
            (Storage::I32(s), _) => TensorMut::strided(s, &self.shape, &strides),
            (Storage::I64(s), _) => TensorMut::strided(s, &self.shape, &strides),
        };
        made.expect("a valid test view")
    }

    /// A view of the first `cols` columns of a 2-D tensor: a strided view whose rows keep the
    /// storage's row stride (vLLM passes a table's leading columns so).
    pub fn view_cols(&self, cols: i64) -> TensorRef<'_> {
        assert_eq!(self.shape.len(), 2, "view_cols of a 2-D tensor");
        assert!(cols <= self.shape[1], "{cols} columns of {:?}", self.shape);
        let (shape, strides) = ([self.shape[0], cols], self.strides());
        let made = match &self.storage {
            Storage::I32(s) => TensorRef::strided(s, &shape, &strides),
            Storage::I64(s) => TensorRef::strided(s, &shape, &strides),
        };
        made.expect("a valid test view")
    }

    /// The elements, row-major.
    pub fn values(&self) -> Vec<i64> {
        let all = self.storage_values();
        all.iter().step_by(self.step as usize).copied().collect()
    }

    /// Every storage element, the gaps between strided elements included.
    pub fn storage_values(&self) -> Vec<i64> {
        match &self.storage {
            Storage::I32(s) => s.iter().map(|&v| i64::from(v)).collect(),
            Storage::I64(s) => s.clone(),
        }
    }
}

/// A one-byte flag dtype: DLPack bool, uint8 or int8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flag {
    Bool,
    U8,
    I8,
}

pub const FLAGS: [Flag; 3] = [Flag::Bool, Flag::U8, Flag::I8];

#[derive(Clone, Debug, PartialEq)]
enum FlagStorage {
    Bool(Vec<bool>),
    U8(Vec<u8>),
    I8(Vec<i8>),
}

/// A host tensor of one-byte flags, compact.
#[derive(Clone, Debug, PartialEq)]
pub struct HostFlags(FlagStorage);

impl HostFlags {
    /// Input flags of 0/1 values. A set flag is stored as a nonzero byte other than 1 where the
    /// dtype allows (u8 255, i8 -1): the library reads nonzero as set.
    pub fn of(values: &[i64], dtype: Flag) -> HostFlags {
        assert!(values.iter().all(|&v| v == 0 || v == 1), "{values:?}");
        HostFlags(match dtype {
            Flag::Bool => FlagStorage::Bool(values.iter().map(|&v| v != 0).collect()),
            Flag::U8 => FlagStorage::U8(
                values
                    .iter()
                    .map(|&v| if v != 0 { 255 } else { 0 })
                    .collect(),
            ),
            Flag::I8 => FlagStorage::I8(
                values
                    .iter()
                    .map(|&v| if v != 0 { -1 } else { 0 })
                    .collect(),
            ),
        })
    }

    /// An output of `len` bytes, each `fill` (a `bool` output cannot be made: see
    /// `TensorRef::from_bools`).
    pub fn filled(len: usize, fill: i8, dtype: Flag) -> HostFlags {
        HostFlags(match dtype {
            Flag::Bool => panic!("flag outputs are u8 or i8"),
            Flag::U8 => FlagStorage::U8(vec![fill as u8; len]),
            Flag::I8 => FlagStorage::I8(vec![fill; len]),
        })
    }

    pub fn view(&self) -> TensorRef<'_> {
        match &self.0 {
            FlagStorage::Bool(s) => TensorRef::from_bools(s),
            FlagStorage::U8(s) => TensorRef::from_slice(s),
            FlagStorage::I8(s) => TensorRef::from_slice(s),
        }
    }

    pub fn view_mut(&mut self) -> TensorMut<'_> {
        match &mut self.0 {
            FlagStorage::Bool(_) => panic!("flag outputs are u8 or i8"),
            FlagStorage::U8(s) => TensorMut::from_slice(s),
            FlagStorage::I8(s) => TensorMut::from_slice(s),
        }
    }

    /// The bytes as integers (bool as 0/1).
    pub fn values(&self) -> Vec<i64> {
        match &self.0 {
            FlagStorage::Bool(s) => s.iter().map(|&v| i64::from(v)).collect(),
            FlagStorage::U8(s) => s.iter().map(|&v| i64::from(v)).collect(),
            FlagStorage::I8(s) => s.iter().map(|&v| i64::from(v)).collect(),
        }
    }
}

/// Whether every value fits an int32 tensor.
pub fn fits_i32(values: &[i64]) -> bool {
    values.iter().all(|&v| i32::try_from(v).is_ok())
}

/// The dtypes a test may store `values` in.
pub fn dtypes_for(values: &[i64]) -> Vec<Int> {
    if fits_i32(values) {
        BOTH.to_vec()
    } else {
        vec![Int::I64]
    }
}

/// Asserts a result is the error `status` with a message containing `needle`.
#[track_caller]
pub fn expect_error<T: std::fmt::Debug>(
    result: cattn::Result<T>,
    status: cattn::Status,
    needle: &str,
) -> cattn::Error {
    let err = result.expect_err("the call should have failed");
    assert_eq!(err.status(), status, "{err}");
    assert!(
        err.message().contains(needle),
        "message {:?} lacks {needle:?}",
        err.message()
    );
    err
}

/// A CUDA-labelled view of a fake address (distinct per `i`), never dereferenced: for the
/// tests where the library refuses CUDA tensors before reading them (a CPU-only build).
pub fn fake_cuda_in(dtype: DataType, i: usize, shape: &[i64]) -> TensorRef<'static> {
    // SAFETY: the library refuses the view before any access (see above).
    unsafe {
        TensorRef::from_raw_parts(
            ((i + 1) << 20) as *const c_void,
            Device::Cuda(0),
            dtype,
            shape,
            None,
            0,
        )
    }
}

/// The output counterpart of fake_cuda_in.
pub fn fake_cuda_out(dtype: DataType, i: usize, shape: &[i64]) -> TensorMut<'static> {
    // SAFETY: as fake_cuda_in.
    unsafe {
        TensorMut::from_raw_parts(
            ((i + 1) << 20) as *mut c_void,
            Device::Cuda(0),
            dtype,
            shape,
            None,
            0,
        )
    }
}
