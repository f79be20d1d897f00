//! Frames off the GPU without holding up the show: a picture is copied
//! into one of three staging buffers in the frame's own commands; after
//! the submit a worker thread maps it, waits for the GPU (not the show's
//! next frame) and hands the pixels to a sink.
//! When all three are still in use the frame is dropped and counted, never
//! waited for. A sink that fails is made again two seconds later.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::base::status::ErrorLog;

/// Staging buffers per sender: the frame on the GPU, one being read, one
/// waiting.
const SLOTS: usize = 3;

/// How long a failed sink rests before it is made again.
const RETRY: Duration = Duration::from_secs(2);

/// One frame read back: RGBA8 (sRGB), rows top first, no padding.
#[derive(Debug, Clone, Default)]
pub struct Frame {
    /// Width and height.
    pub size: [u32; 2],
    /// `size[0] * size[1] * 4` bytes.
    pub rgba: Vec<u8>,
    /// Show time of the frame, seconds.
    pub time: f64,
}

impl Frame {
    /// The frame's pixels as BGRA, what Spout's and Syphon's textures
    /// hold, into `out` (kept between frames, so no allocation).
    pub fn bgra_into(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend(
            self.rgba
                .chunks_exact(4)
                .flat_map(|p| [p[2], p[1], p[0], p[3]]),
        );
    }
}

/// Why a sink could not be made, or failed: each sender's own error.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// An NDI source.
    #[error(transparent)]
    Ndi(#[from] crate::base::ndi::NdiError),
    /// A PipeWire node.
    #[error(transparent)]
    PipeWire(#[from] super::pipewire::PipeWireError),
    /// A v4l2loopback camera.
    #[error(transparent)]
    V4l2(#[from] super::v4l2::V4l2Error),
    /// A Spout sender.
    #[error(transparent)]
    Spout(#[from] super::spout::SpoutError),
    /// A Syphon server.
    #[error(transparent)]
    Syphon(#[from] super::syphon::SyphonError),
    /// Lighting over Art-Net or sACN.
    #[error(transparent)]
    Dmx(#[from] crate::outputs::dmx::DmxError),
    /// A recording.
    #[error(transparent)]
    Recording(#[from] super::record::RecordError),
    /// A stream's ffmpeg would not start.
    #[error("{url}: {error}")]
    StreamStart {
        /// The stream's URL.
        url: String,
        /// Why.
        error: crate::outputs::video::VideoError,
    },
    /// A stream's ffmpeg stopped taking frames.
    #[error(transparent)]
    Stream(crate::outputs::video::VideoError),
    /// A stream already finished.
    #[error("the stream ended")]
    StreamEnded,
}

/// Where frames go: a receiver of NDI, a stream, a recording, a device.
pub trait Sink: Send {
    /// Takes one frame; an error ends this sink (it is made again later).
    fn send(&mut self, frame: &Frame) -> Result<(), SinkError>;

    /// Ends it cleanly (a recording's file written out); what it made.
    fn finish(&mut self) -> Result<Option<String>, SinkError> {
        Ok(None)
    }
}

/// Makes a sink for frames of a size (again after a failure).
pub type MakeSink = Box<dyn FnMut([u32; 2]) -> Result<Box<dyn Sink>, SinkError> + Send>;

/// What a sender did, read by the HUD and the log.
#[derive(Debug, Default)]
pub struct Counts {
    /// Frames handed to the sink.
    pub sent: AtomicU64,
    /// Frames dropped: no buffer free, or no sink.
    pub dropped: AtomicU64,
    /// The last failure, if the sink is down.
    pub failure: Mutex<Option<String>>,
    /// What the finished sink made (a recording's file).
    pub made: Mutex<Option<String>>,
    /// Milliseconds from the frame's submit to its pixels in the worker's
    /// hands, the last [`LATENCIES`] frames.
    latencies: Mutex<std::collections::VecDeque<f32>>,
}

/// Readback latencies kept for the median and the worst.
const LATENCIES: usize = 1024;

impl Counts {
    fn fail(&self, why: Option<String>) {
        *self.failure.lock().unwrap_or_else(PoisonError::into_inner) = why;
    }

    fn took(&self, since: Instant) {
        let mut list = self
            .latencies
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if list.len() == LATENCIES {
            list.pop_front();
        }
        list.push_back(since.elapsed().as_secs_f32() * 1e3);
    }

    /// Median and worst readback latency in milliseconds over the last
    /// frames, if any came.
    pub fn latency(&self) -> Option<[f32; 2]> {
        let mut list: Vec<f32> = self
            .latencies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .copied()
            .collect();
        list.sort_by(f32::total_cmp);
        Some([*list.get(list.len() / 2)?, *list.last()?])
    }

    /// The sink's failure, if it is down.
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

const FREE: u8 = 0;
const BUSY: u8 = 1;

struct ReadbackSlot {
    buffer: wgpu::Buffer,
    state: AtomicU8,
}

struct Job {
    slot: usize,
    time: f64,
    submitted: Instant,
}

/// Frames of one size going to one sink.
pub struct Tap {
    size: [u32; 2],
    row: u32,
    slots: Arc<Vec<ReadbackSlot>>,
    copied: Vec<Job>,
    jobs: Option<SyncSender<Job>>,
    worker: Option<std::thread::JoinHandle<()>>,
    /// What it did.
    pub counts: Arc<Counts>,
}

impl Tap {
    /// A tap for `size` frames into sinks `make` makes, on a thread named
    /// `name` (restarted after a panic, reported in `errors`).
    pub fn start(
        device: &wgpu::Device,
        name: &str,
        size: [u32; 2],
        make: MakeSink,
        errors: ErrorLog,
    ) -> std::io::Result<Self> {
        let row = (size[0] * 4).div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT)
            * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let slots: Arc<Vec<ReadbackSlot>> = Arc::new(
            (0..SLOTS)
                .map(|_| ReadbackSlot {
                    buffer: device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("send.readback"),
                        size: u64::from(row) * u64::from(size[1]),
                        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
                        mapped_at_creation: false,
                    }),
                    state: AtomicU8::new(FREE),
                })
                .collect(),
        );
        let (jobs, received) = sync_channel(SLOTS);
        let counts = Arc::new(Counts::default());
        let mut worker = Worker {
            device: device.clone(),
            slots: slots.clone(),
            received,
            size,
            row,
            make,
            sink: None,
            rested: None,
            counts: counts.clone(),
            frame: Frame::default(),
        };
        let worker = crate::base::supervise::spawn(name, errors, move || worker.run())?;
        Ok(Self {
            size,
            row,
            slots,
            copied: Vec::new(),
            jobs: Some(jobs),
            worker: Some(worker),
            counts,
        })
    }

    /// The frame size this tap takes.
    pub fn size(&self) -> [u32; 2] {
        self.size
    }

    /// Records copying `texture` (of this tap's size) into a free buffer,
    /// or counts the frame dropped when none is free.
    pub fn capture(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        texture: &wgpu::Texture,
        time: f64,
    ) {
        if [texture.width(), texture.height()] != self.size {
            self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let free = self.slots.iter().position(|s| {
            s.state
                .compare_exchange(FREE, BUSY, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        });
        let Some(slot) = free else {
            self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        encoder.copy_texture_to_buffer(
            texture.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &self.slots[slot].buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(self.row),
                    rows_per_image: Some(self.size[1]),
                },
            },
            wgpu::Extent3d {
                width: self.size[0],
                height: self.size[1],
                depth_or_array_layers: 1,
            },
        );
        self.copied.push(Job {
            slot,
            time,
            submitted: Instant::now(),
        });
    }

    /// After the frame's submit: hands what was copied to the worker,
    /// which maps it and waits for the GPU itself, so the pixels are out
    /// as soon as the frame is done rather than at the show's next poll.
    pub fn submitted(&mut self) {
        let Some(jobs) = &self.jobs else {
            return;
        };
        for mut job in self.copied.drain(..) {
            job.submitted = Instant::now();
            let slot = job.slot;
            if jobs.try_send(job).is_err() {
                self.slots[slot].state.store(FREE, Ordering::Release);
                self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Stops taking frames and waits for the sink to finish (a
    /// recording's file written out).
    pub fn finish(mut self) -> Arc<Counts> {
        self.jobs = None;
        if let Some(worker) = self.worker.take() {
            worker.join().ok();
        }
        self.counts.clone()
    }
}

struct Worker {
    device: wgpu::Device,
    slots: Arc<Vec<ReadbackSlot>>,
    received: Receiver<Job>,
    size: [u32; 2],
    row: u32,
    make: MakeSink,
    sink: Option<Box<dyn Sink>>,
    rested: Option<Instant>,
    counts: Arc<Counts>,
    frame: Frame,
}

impl Worker {
    fn run(&mut self) {
        while let Ok(job) = self.received.recv() {
            if self.read(&job) {
                self.deliver();
            } else {
                self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        if let Some(mut sink) = self.sink.take() {
            match sink.finish() {
                Ok(made) => {
                    *self
                        .counts
                        .made
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = made;
                }
                Err(why) => self.counts.fail(Some(why.to_string())),
            }
        }
    }

    /// Maps the buffer of `job` once the GPU has filled it, copies it into
    /// the frame, rows unpadded, and frees the buffer; whether the frame
    /// is whole.
    fn read(&mut self, job: &Job) -> bool {
        let slot = &self.slots[job.slot];
        let (mapped, done) = std::sync::mpsc::channel();
        slot.buffer
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |result| {
                mapped.send(result.is_ok()).ok();
            });
        // Looks every half millisecond rather than waiting inside the
        // device (a wait there holds it against the show's own submits); a
        // lost device may never answer: the frame is given up, not the
        // thread.
        let given_up = Instant::now() + Duration::from_secs(2);
        let mapped = loop {
            self.device.poll(wgpu::PollType::Poll).ok();
            match done.try_recv() {
                Ok(ok) => break ok,
                Err(std::sync::mpsc::TryRecvError::Empty) if Instant::now() < given_up => {
                    std::thread::sleep(Duration::from_micros(500));
                }
                Err(_) => break false,
            }
        };
        if !mapped {
            slot.state.store(FREE, Ordering::Release);
            return false;
        }
        let width = (self.size[0] * 4) as usize;
        self.frame.size = self.size;
        self.frame.time = job.time;
        self.frame.rgba.clear();
        if let Ok(data) = slot.buffer.slice(..).get_mapped_range() {
            for row in data.chunks(self.row as usize).take(self.size[1] as usize) {
                self.frame.rgba.extend_from_slice(&row[..width]);
            }
        }
        slot.buffer.unmap();
        slot.state.store(FREE, Ordering::Release);
        self.counts.took(job.submitted);
        self.frame.rgba.len() == width * self.size[1] as usize
    }

    /// Hands the frame to the sink, making one first if there is none and
    /// the last failure has rested.
    fn deliver(&mut self) {
        if self.sink.is_none() {
            if self.rested.is_some_and(|t| t.elapsed() < RETRY) {
                self.counts.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
            match (self.make)(self.size) {
                Ok(sink) => {
                    self.sink = Some(sink);
                    self.counts.fail(None);
                }
                Err(why) => {
                    self.down(why);
                    return;
                }
            }
        }
        if let Some(sink) = self.sink.as_mut() {
            match sink.send(&self.frame) {
                Ok(()) => {
                    self.counts.sent.fetch_add(1, Ordering::Relaxed);
                }
                Err(why) => {
                    self.sink = None;
                    self.down(why);
                }
            }
        }
    }

    fn down(&mut self, why: SinkError) {
        // Every retry of a target that cannot start fails the same way:
        // the log hears of it once in a while, with the count.
        crate::base::status::warn_held(
            "send",
            format_args!("{why}; trying again in {} s", RETRY.as_secs()),
        );
        self.counts.fail(Some(why.to_string()));
        self.counts.dropped.fetch_add(1, Ordering::Relaxed);
        self.rested = Some(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::Frame;

    #[test]
    fn bgra_swaps_red_and_blue_and_keeps_alpha() {
        let frame = Frame {
            size: [2, 1],
            rgba: vec![1, 2, 3, 4, 5, 6, 7, 8],
            time: 0.0,
        };
        let mut out = vec![9; 3];
        frame.bgra_into(&mut out);
        assert_eq!(out, [3, 2, 1, 4, 7, 6, 5, 8]);
    }
}
