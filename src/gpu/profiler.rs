//! GPU timing of every pass from timestamp queries. Each pass asks for a
//! slot (two queries: begin and end); at the end of the frame the queries
//! are resolved into a staging buffer from a small ring, mapped without
//! waiting, and read a frame or two later. When a frame asks for more slots
//! than there are (a fluid running many substeps), the query set grows for
//! the next frame, so no layer's timings fall off the end. The HUD shows
//! the latest numbers; the bench waits for each frame and keeps them all.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Passes a frame may time at first.
const FIRST_CAPACITY: u32 = 64;

/// Passes a frame may time at most: WebGPU's 4,096 queries per set.
const MAX_PASSES: u32 = 2_048;
/// Staging buffers in flight.
const RING: usize = 3;

/// One pass's GPU time.
#[derive(Debug, Clone, PartialEq)]
pub struct PassTime {
    /// The pass label, e.g. `shader.sky` or `compositor.master`.
    pub label: String,
    /// Milliseconds between its begin and end timestamps.
    pub ms: f64,
}

/// One finished frame's pass times.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameTimes {
    /// The frame's number: frames are counted from 0 by
    /// [`GpuProfiler::resolve`], timed or not, so a frame that found no
    /// free staging buffer leaves a gap rather than shifting the rest.
    pub frame: u64,
    /// Its passes in the order they ran.
    pub passes: Vec<PassTime>,
    /// Milliseconds from its first timestamp to its last (its encoder's
    /// first and last command where the device writes timestamps between
    /// passes, else its first and last pass): its passes and the gaps
    /// between them (barriers, clears, copies), what the frame holds the
    /// GPU for.
    pub span_ms: f64,
}

impl FrameTimes {
    /// A frame whose passes ran back to back (its span their sum): for
    /// frames made up by tests and models.
    pub fn back_to_back(frame: u64, passes: Vec<PassTime>) -> Self {
        let span_ms = passes.iter().map(|p| p.ms).sum();
        Self {
            frame,
            passes,
            span_ms,
        }
    }
}

/// Where a staging buffer is in its round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StagingState {
    /// Available for the next frame's results.
    Free,
    /// Holds a copy command for a frame not yet submitted.
    Resolved,
    /// Submitted and asked to map; `ready` turns true when it has.
    Mapping,
}

struct StagingBuffer {
    buffer: wgpu::Buffer,
    labels: Vec<String>,
    frame: u64,
    state: StagingState,
    ready: Arc<AtomicBool>,
}

/// Timestamp queries for the passes of one frame at a time.
pub struct GpuProfiler {
    device: wgpu::Device,
    capacity: u32,
    asked: u32,
    queries: Option<wgpu::QuerySet>,
    resolve: wgpu::Buffer,
    ring: Vec<StagingBuffer>,
    frame_labels: Vec<String>,
    frames_resolved: u64,
    ns_per_tick: f64,
    latest: Vec<PassTime>,
    latest_span_ms: f64,
    stages: bool,
    /// This frame's slot for its encoder's first and last timestamp, where
    /// the device can write timestamps outside passes.
    frame_slot: Option<u32>,
}

/// The label of a frame's encoder-wide timestamps: counted in its span,
/// not among its passes.
const FRAME_LABEL: &str = "(frame)";

impl GpuProfiler {
    /// A profiler; it records nothing when the device has no timestamps.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, timestamps: bool) -> Self {
        let mut profiler = Self {
            device: device.clone(),
            capacity: 0,
            asked: 0,
            queries: None,
            resolve: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("profiler.resolve"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            ring: Vec::new(),
            frame_labels: Vec::new(),
            frames_resolved: 0,
            ns_per_tick: f64::from(queue.get_timestamp_period()),
            latest: Vec::new(),
            latest_span_ms: 0.0,
            stages: false,
            frame_slot: None,
        };
        if timestamps {
            profiler.allocate(FIRST_CAPACITY);
        }
        profiler
    }

    /// (Re)creates the query set and buffers for `capacity` passes; frames
    /// still being read back are dropped.
    fn allocate(&mut self, capacity: u32) {
        let device = &self.device;
        self.capacity = capacity;
        self.queries = Some(device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("profiler.queries"),
            ty: wgpu::QueryType::Timestamp,
            count: capacity * 2,
        }));
        let bytes = u64::from(capacity * 2) * 8;
        self.resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("profiler.resolve"),
            size: bytes,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        self.ring = (0..RING)
            .map(|i| StagingBuffer {
                buffer: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&format!("profiler.staging{i}")),
                    size: bytes,
                    usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
                    mapped_at_creation: false,
                }),
                labels: Vec::new(),
                frame: 0,
                state: StagingState::Free,
                ready: Arc::new(AtomicBool::new(false)),
            })
            .collect();
    }

    /// Timestamp writes for a render pass labelled `label`, or `None` when
    /// timing is off or this frame is full.
    pub fn render_pass(&mut self, label: &str) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
        let first = self.slot(label)?;
        Some(wgpu::RenderPassTimestampWrites {
            query_set: self.queries.as_ref()?,
            beginning_of_pass_write_index: Some(first),
            end_of_pass_write_index: Some(first + 1),
        })
    }

    /// Timestamp writes for a compute pass labelled `label`.
    pub fn compute_pass(&mut self, label: &str) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let first = self.slot(label)?;
        Some(wgpu::ComputePassTimestampWrites {
            query_set: self.queries.as_ref()?,
            beginning_of_pass_write_index: Some(first),
            end_of_pass_write_index: Some(first + 1),
        })
    }

    fn slot(&mut self, label: &str) -> Option<u32> {
        self.queries.as_ref()?;
        self.asked += 1;
        let free_staging = self.ring.iter().any(|s| s.state == StagingState::Free);
        let count = self.frame_labels.len() as u32;
        if !free_staging || count >= self.capacity {
            return None;
        }
        self.frame_labels.push(label.to_string());
        Some(count * 2)
    }

    /// Times what `record` writes into `encoder` outside passes (a copy, a
    /// clear) as `label`, where the device can write timestamps between
    /// passes; it must not begin timed passes itself.
    pub fn time_commands<R>(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        label: &str,
        record: impl FnOnce(&mut wgpu::CommandEncoder) -> R,
    ) -> R {
        let slot = self.encoder_slot(label);
        self.write_timestamp(encoder, slot);
        let recorded = record(encoder);
        self.write_timestamp(encoder, slot.map(|first| first + 1));
        recorded
    }

    /// Marks the start of a frame's encoder, before its first command,
    /// where the device can write timestamps outside passes: the frame's
    /// span then starts here and ends at [`GpuProfiler::resolve`].
    pub fn open_frame(&mut self, encoder: &mut wgpu::CommandEncoder) {
        self.frame_slot = self.encoder_slot(FRAME_LABEL);
        self.write_timestamp(encoder, self.frame_slot);
    }

    /// A slot for timestamps written outside passes, where the device can.
    fn encoder_slot(&mut self, label: &str) -> Option<u32> {
        let inside = wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        (self.device.features().contains(inside))
            .then(|| self.slot(label))
            .flatten()
    }

    /// Writes query `index`, if any, between passes.
    fn write_timestamp(&self, encoder: &mut wgpu::CommandEncoder, index: Option<u32>) {
        if let (Some(index), Some(queries)) = (index, self.queries.as_ref()) {
            encoder.write_timestamp(queries, index);
        }
    }

    /// Resolves this frame's queries into a free staging buffer. Call after
    /// the frame's last pass, before finishing the encoder.
    pub fn resolve(&mut self, encoder: &mut wgpu::CommandEncoder) {
        let frame_end = self.frame_slot.take().map(|first| first + 1);
        self.write_timestamp(encoder, frame_end);
        self.record_resolve(encoder);
        self.frames_resolved += 1;
        let asked = std::mem::take(&mut self.asked);
        if asked > self.capacity && self.capacity < MAX_PASSES {
            self.allocate(asked.next_power_of_two().min(MAX_PASSES));
        }
    }

    fn record_resolve(&mut self, encoder: &mut wgpu::CommandEncoder) {
        let (Some(queries), false) = (self.queries.as_ref(), self.frame_labels.is_empty()) else {
            return;
        };
        let Some(staging) = self.ring.iter_mut().find(|s| s.state == StagingState::Free) else {
            self.frame_labels.clear();
            return;
        };
        let count = self.frame_labels.len() as u32 * 2;
        encoder.resolve_query_set(queries, 0..count, &self.resolve, 0);
        encoder.copy_buffer_to_buffer(&self.resolve, 0, &staging.buffer, 0, u64::from(count) * 8);
        staging.labels = std::mem::take(&mut self.frame_labels);
        staging.frame = self.frames_resolved;
        staging.state = StagingState::Resolved;
    }

    /// Starts mapping the buffers resolved this frame. Call after submit.
    pub fn after_submit(&mut self) {
        for staging in self.ring.iter_mut() {
            if staging.state != StagingState::Resolved {
                continue;
            }
            staging.state = StagingState::Mapping;
            let ready = staging.ready.clone();
            let size = staging.labels.len() as u64 * 16;
            staging
                .buffer
                .slice(..size)
                .map_async(wgpu::MapMode::Read, move |result| {
                    ready.store(result.is_ok(), Ordering::Release);
                });
        }
    }

    /// The number the next frame to be resolved will carry.
    pub fn next_frame(&self) -> u64 {
        self.frames_resolved
    }

    /// Reads every finished frame's timings; the newest become [`latest`].
    /// Returns each finished frame, oldest first.
    ///
    /// [`latest`]: GpuProfiler::latest
    pub fn collect(&mut self) -> Vec<FrameTimes> {
        let mut frames = Vec::new();
        for staging in self.ring.iter_mut() {
            if staging.state != StagingState::Mapping
                || !staging.ready.swap(false, Ordering::AcqRel)
            {
                continue;
            }
            let size = staging.labels.len() as u64 * 16;
            let ticks: Vec<u64> = match staging.buffer.slice(..size).get_mapped_range() {
                Ok(mapped) => bytemuck::pod_collect_to_vec(&mapped),
                Err(_) => Vec::new(),
            };
            staging.buffer.unmap();
            // A query left unwritten reads 0: it would stretch the span
            // back to the clock's start.
            let began = (ticks.iter().step_by(2).copied())
                .filter(|&t| t != 0)
                .min()
                .unwrap_or(0);
            let ended = ticks.iter().skip(1).step_by(2).copied().max().unwrap_or(0);
            let span_ms = ended.saturating_sub(began) as f64 * self.ns_per_tick / 1e6;
            let passes = staging
                .labels
                .drain(..)
                .zip(ticks.chunks_exact(2))
                .map(|(label, t)| PassTime {
                    label,
                    ms: t[1].saturating_sub(t[0]) as f64 * self.ns_per_tick / 1e6,
                })
                .filter(|pass| pass.label != FRAME_LABEL)
                .collect::<Vec<_>>();
            staging.state = StagingState::Free;
            frames.push(FrameTimes {
                frame: staging.frame,
                passes,
                span_ms,
            });
        }
        // The ring is reused in whatever order buffers come free.
        frames.sort_by_key(|f| f.frame);
        if let Some(newest) = frames.last() {
            self.latest = newest.passes.clone();
            self.latest_span_ms = newest.span_ms;
        }
        frames
    }

    /// The most recent frame's pass times.
    pub fn latest(&self) -> &[PassTime] {
        &self.latest
    }

    /// The most recent frame's GPU span ([`FrameTimes::span_ms`]).
    pub fn latest_span_ms(&self) -> f64 {
        self.latest_span_ms
    }

    /// Whether timestamps are being recorded.
    pub fn enabled(&self) -> bool {
        self.queries.is_some()
    }

    /// Asks simulations to time each stage of a step in a pass of its own
    /// (`sylva bench --layer`), where a show records a frame's steps in as
    /// few passes as it can (each pass costs the CPU tens of microseconds,
    /// and a fluid runs fifty substeps a frame).
    pub fn time_stages(&mut self) {
        self.stages = true;
    }

    /// Whether each stage is timed on its own.
    pub fn times_stages(&self) -> bool {
        self.stages && self.enabled()
    }
}
