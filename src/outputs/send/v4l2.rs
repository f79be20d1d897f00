//! A virtual camera on Linux: frames written to a v4l2loopback device
//! (`v4l2:/dev/video10`) as YUYV 4:2:2, which OBS, browsers and video
//! calls open like a webcam. The device is behind [`VideoDevice`] so the
//! conversion and the writes are tested without the kernel module.

use super::kinds::{SenderKind, Target};
use super::tap::{Frame, Sink, SinkError};

/// `v4l2:/dev/videoN`: a v4l2loopback device node (Linux).
pub const SENDER: SenderKind = SenderKind {
    form: "v4l2:/dev/videoN (Linux)",
    schemes: &["v4l2:"],
    check: |_| Ok(()),
    missing: if cfg!(target_os = "linux") {
        None
    } else {
        Some("v4l2 virtual cameras are Linux's")
    },
    open: open_sink,
};

/// Why a virtual camera could not start, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum V4l2Error {
    /// Not on Linux.
    #[error("{0}: v4l2 virtual cameras are Linux's")]
    NotLinux(String),
    /// A path that is no video device node.
    #[error("v4l2:{0}: a virtual camera is a /dev/videoN device")]
    NotADevice(String),
    /// The device node would not open.
    #[error(
        "v4l2:{path}: {error} (load the module: sudo modprobe v4l2loopback devices=1 video_nr=10 exclusive_caps=1)"
    )]
    Open {
        /// The device node.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// The device refused the frame format.
    #[error("v4l2:{path}: the device refused {width}x{height} YUYV: {error}")]
    Format {
        /// The device node.
        path: String,
        /// Width asked for (even).
        width: u32,
        /// Height asked for.
        height: u32,
        /// Why.
        error: std::io::Error,
    },
    /// A frame could not be written.
    #[error("v4l2:{path}: {error}")]
    Write {
        /// The device node.
        path: String,
        /// Why.
        error: std::io::Error,
    },
}

#[cfg(target_os = "linux")]
fn open_sink(target: &Target, _size: [u32; 2], _fps: f32) -> Result<Box<dyn Sink>, SinkError> {
    let node = LoopbackDevice::open(target.rest())?;
    Ok(Box::new(VirtualCamera::new(Box::new(node))))
}

#[cfg(not(target_os = "linux"))]
fn open_sink(target: &Target, _size: [u32; 2], _fps: f32) -> Result<Box<dyn Sink>, SinkError> {
    Err(V4l2Error::NotLinux(target.label().to_string()).into())
}

/// Where the camera's frames go.
pub trait VideoDevice: Send {
    /// Sets the frame format: `width` × `height` YUYV.
    fn set_format(&mut self, width: u32, height: u32) -> Result<(), V4l2Error>;
    /// Writes one frame's bytes.
    fn write_frame(&mut self, bytes: &[u8]) -> Result<(), V4l2Error>;
}

/// A virtual camera fed the show's frames.
pub struct VirtualCamera {
    device: Box<dyn VideoDevice>,
    size: Option<[u32; 2]>,
    yuyv: Vec<u8>,
}

impl VirtualCamera {
    /// A camera writing into `device`.
    pub fn new(device: Box<dyn VideoDevice>) -> Self {
        Self {
            device,
            size: None,
            yuyv: Vec::new(),
        }
    }
}

impl Sink for VirtualCamera {
    fn send(&mut self, frame: &Frame) -> Result<(), SinkError> {
        if self.size != Some(frame.size) {
            self.device.set_format(frame.size[0], frame.size[1])?;
            self.size = Some(frame.size);
        }
        to_yuyv(frame, &mut self.yuyv);
        Ok(self.device.write_frame(&self.yuyv)?)
    }
}

/// `frame` (RGBA, sRGB) as YUYV: BT.601 limited range, what webcams send
/// and what receivers assume; each pair of pixels shares its chroma. An
/// odd last column is dropped (YUYV widths are even).
pub fn to_yuyv(frame: &Frame, out: &mut Vec<u8>) {
    let [width, height] = frame.size.map(|s| s as usize);
    let even = width & !1;
    out.clear();
    out.reserve(even * height * 2);
    let luma = |p: &[u8]| {
        let [r, g, b] = [p[0], p[1], p[2]].map(f32::from);
        16.0 + (65.481 * r + 128.553 * g + 24.966 * b) / 255.0
    };
    for row in frame.rgba.chunks_exact(width * 4).take(height) {
        for pair in row[..even * 4].chunks_exact(8) {
            let (a, b) = (&pair[..4], &pair[4..]);
            let [r, g, bl] = [0, 1, 2].map(|c| (f32::from(a[c]) + f32::from(b[c])) * 0.5);
            let u = 128.0 + (-37.797 * r - 74.203 * g + 112.0 * bl) / 255.0;
            let v = 128.0 + (112.0 * r - 93.786 * g - 18.214 * bl) / 255.0;
            let byte = |x: f32| x.round().clamp(0.0, 255.0) as u8;
            out.extend_from_slice(&[byte(luma(a)), byte(u), byte(luma(b)), byte(v)]);
        }
    }
}

/// A v4l2loopback device node.
#[cfg(target_os = "linux")]
pub struct LoopbackDevice {
    file: std::fs::File,
    path: String,
}

#[cfg(target_os = "linux")]
impl LoopbackDevice {
    /// Opens the device node at `path` (`/dev/videoN`) for writing.
    pub fn open(path: &str) -> Result<Self, V4l2Error> {
        if !path.starts_with("/dev/video") {
            return Err(V4l2Error::NotADevice(path.to_string()));
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|error| V4l2Error::Open {
                path: path.to_string(),
                error,
            })?;
        Ok(Self {
            file,
            path: path.to_string(),
        })
    }
}

#[cfg(target_os = "linux")]
impl VideoDevice for LoopbackDevice {
    fn set_format(&mut self, width: u32, height: u32) -> Result<(), V4l2Error> {
        use std::os::fd::AsRawFd;
        // struct v4l2_format: the buffer type, then (8-aligned) the
        // v4l2_pix_format in a 200-byte union.
        #[repr(C)]
        struct Format {
            kind: u32,
            _align: u32,
            width: u32,
            height: u32,
            pixel_format: u32,
            field: u32,
            bytes_per_line: u32,
            size_image: u32,
            colour_space: u32,
            rest: [u32; 43],
        }
        const OUTPUT: u32 = 2; // V4L2_BUF_TYPE_VIDEO_OUTPUT
        const FIELD_NONE: u32 = 1;
        const SRGB: u32 = 8; // V4L2_COLORSPACE_SRGB
        // _IOWR('V', 5, struct v4l2_format), 208 bytes.
        const VIDIOC_S_FMT: u64 = 0xC0D0_5605;
        let even = width & !1;
        let mut format = Format {
            kind: OUTPUT,
            _align: 0,
            width: even,
            height,
            pixel_format: u32::from_le_bytes(*b"YUYV"),
            field: FIELD_NONE,
            bytes_per_line: even * 2,
            size_image: even * 2 * height,
            colour_space: SRGB,
            rest: [0; 43],
        };
        // SAFETY: VIDIOC_S_FMT reads and writes a struct v4l2_format,
        // which `Format` lays out at its 208 bytes.
        let result = unsafe {
            libc::ioctl(
                self.file.as_raw_fd(),
                VIDIOC_S_FMT as _,
                &mut format as *mut Format,
            )
        };
        if result < 0 {
            return Err(V4l2Error::Format {
                path: self.path.clone(),
                width: even,
                height,
                error: std::io::Error::last_os_error(),
            });
        }
        Ok(())
    }

    fn write_frame(&mut self, bytes: &[u8]) -> Result<(), V4l2Error> {
        use std::io::Write;
        self.file
            .write_all(bytes)
            .map_err(|error| V4l2Error::Write {
                path: self.path.clone(),
                error,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Formats set and frames written.
    type Calls = (Vec<[u32; 2]>, Vec<Vec<u8>>);

    #[derive(Default, Clone)]
    struct Recorded(Arc<Mutex<Calls>>);

    impl VideoDevice for Recorded {
        fn set_format(&mut self, width: u32, height: u32) -> Result<(), V4l2Error> {
            self.0.lock().expect("lock").0.push([width, height]);
            Ok(())
        }
        fn write_frame(&mut self, bytes: &[u8]) -> Result<(), V4l2Error> {
            self.0.lock().expect("lock").1.push(bytes.to_vec());
            Ok(())
        }
    }

    #[test]
    fn white_black_and_red_become_their_yuyv() {
        let frame = Frame {
            size: [2, 2],
            rgba: [
                [255, 255, 255, 255],
                [255, 255, 255, 255],
                [0, 0, 0, 255],
                [255, 0, 0, 255],
            ]
            .concat(),
            time: 0.0,
        };
        let mut out = Vec::new();
        to_yuyv(&frame, &mut out);
        assert_eq!(out.len(), 8);
        assert_eq!(&out[..4], &[235, 128, 235, 128]);
        // Black then red share chroma: half-red's.
        assert_eq!(out[4], 16);
        assert_eq!(out[6], 81);
        assert_eq!(out[7], 184);
    }

    #[test]
    fn the_camera_sets_its_format_once_and_writes_each_frame() {
        let device = Recorded::default();
        let mut camera = VirtualCamera::new(Box::new(device.clone()));
        let frame = Frame {
            size: [3, 2],
            rgba: vec![128; 3 * 2 * 4],
            time: 0.0,
        };
        camera.send(&frame).expect("sends");
        camera.send(&frame).expect("sends");
        let recorded = device.0.lock().expect("lock");
        assert_eq!(recorded.0, vec![[3, 2]]);
        assert_eq!(recorded.1.len(), 2);
        // Three pixels wide: one pair, the odd column dropped.
        assert_eq!(recorded.1[0].len(), 2 * 2 * 2);
    }
}
