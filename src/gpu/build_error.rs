//! Why a GPU object could not be built or read: a WGSL error
//! (`file:line:column`), a buffer larger than the device binds, the
//! device refusing (validation, out of memory), or a readback failing.
//! Whatever fails, the running version of the object stays.

use super::ReadbackError;
use super::wgsl::ShaderError;

/// Why a kernel, pipeline or simulation could not be built, or its
/// buffers read.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The WGSL could not be read, composed or validated.
    #[error(transparent)]
    Shader(#[from] ShaderError),
    /// One buffer would be larger than the device binds.
    #[error(
        "{what} need {} MiB in one buffer; this device allows {} MiB. The running simulation stays.",
        bytes >> 20,
        limit >> 20
    )]
    TooLarge {
        /// What asked for it (`fluid.count 16000000`).
        what: String,
        /// Bytes asked for.
        bytes: u64,
        /// The device's limit.
        limit: u64,
    },
    /// The device refused to make an object (validation or out of memory).
    #[error("{label}: {message}")]
    Device {
        /// The object's label.
        label: String,
        /// wgpu's message.
        message: String,
    },
    /// Reading results back failed.
    #[error(transparent)]
    Readback(#[from] ReadbackError),
}
