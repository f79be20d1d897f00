//! The recording as an [`Output`]: `record.on` starts a take (a
//! [`Sender`] into a [`Recording`](super::record::Recording) with the live
//! input's sound) and stops it, its file written out; each take goes
//! beside the last, never over it.

use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;

use super::record::{self, SoundBlock};
use super::sender::Sender;
use super::tap::{MakeSink, Sink, SinkError};
use super::{RECORD, RecordOptions};
use crate::base::status::ErrorLog;
use crate::gpu::{Gpu, GpuProfiler};
use crate::outputs::{Output, Pictures};
use crate::params::{Registry, Source, Value};

/// Takes of the performance, as `record.on` asks.
pub struct Recorder {
    options: RecordOptions,
    take: Option<Sender>,
    takes: u32,
    fps: f32,
    /// What the takes that ended said, for the show's last lines.
    finished: Vec<String>,
    errors: ErrorLog,
    /// Where takes go when `--record` names no file.
    recordings: PathBuf,
}

impl Recorder {
    /// Takes as `options` say, at `fps`, into `recordings` unless they name
    /// a file; failures said in `errors`.
    pub fn new(options: RecordOptions, fps: f32, errors: ErrorLog, recordings: PathBuf) -> Self {
        Self {
            options,
            take: None,
            takes: 0,
            fps,
            finished: Vec::new(),
            errors,
            recordings,
        }
    }

    /// Whether `record.on` asks for a take that has not started: the
    /// caller then hands [`Recorder::keep`] the sound to record with it.
    pub fn starting_a_take(&self, registry: &Registry) -> bool {
        registry.flag(RECORD) && self.take.is_none()
    }

    /// Starts or stops a take as `record.on` in `registry` says (a new one
    /// with the live input's `sound`, if any); one that cannot start is
    /// said and `record.on` turned off.
    pub fn keep(&mut self, registry: &mut Registry, sound: Option<Receiver<SoundBlock>>) {
        let wanted = registry.flag(RECORD);
        if wanted && self.take.is_none() {
            match self.start(sound) {
                Ok(take) => self.take = Some(take),
                Err(error) => {
                    self.errors.report("record", error);
                    registry.set(RECORD, Value::Bool(false), Source::Show).ok();
                }
            }
        } else if !wanted && let Some(mut take) = self.take.take() {
            self.finished.extend(take.finish());
        }
    }

    fn start(
        &mut self,
        sound: Option<Receiver<SoundBlock>>,
    ) -> Result<Sender, record::RecordError> {
        let base = match &self.options.path {
            Some(path) => path.clone(),
            None => {
                let folder = self.recordings.clone();
                std::fs::create_dir_all(&folder).map_err(|error| record::RecordError::Folder {
                    path: folder.clone(),
                    error,
                })?;
                let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
                folder.join(format!("sylva-{stamp}.mp4"))
            }
        };
        self.takes += 1;
        let path = free_name(&base, self.takes);
        let fps = self.fps;
        let mut sound = Some(sound);
        let file = path.clone();
        let make: MakeSink = Box::new(move |size| {
            // A retry after a failure starts a new file beside the first.
            let path = free_name(&file, 1);
            record::Recording::start(&path, size, fps, sound.take().flatten())
                .map(|r| Box::new(r) as Box<dyn Sink>)
                .map_err(SinkError::from)
        });
        tracing::info!("recording to {}", path.display());
        Ok(Sender::new(
            format!("recording {}", path.display()),
            self.options.output.clone(),
            make,
            self.errors.clone(),
        ))
    }
}

impl Output for Recorder {
    fn size(&self) -> Option<[u32; 2]> {
        None
    }

    fn record(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        pictures: &Pictures<'_>,
    ) {
        if let Some(take) = self.take.as_mut() {
            take.record(gpu, encoder, profiler, pictures);
        }
    }

    fn submitted(&mut self) {
        if let Some(take) = self.take.as_mut() {
            take.submitted();
        }
    }

    fn status(&self) -> Vec<String> {
        self.take.as_ref().map(Sender::status).unwrap_or_default()
    }

    fn finish(&mut self) -> Vec<String> {
        let mut lines = std::mem::take(&mut self.finished);
        if let Some(mut take) = self.take.take() {
            lines.extend(take.finish());
        }
        lines
    }
}

/// `base`, or for take `n` > 1 `base-n`, or the next number free beside it.
fn free_name(base: &Path, n: u32) -> PathBuf {
    let stem = base
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let extension = base
        .extension()
        .map(|e| e.to_string_lossy().to_string())
        .unwrap_or_else(|| "mp4".into());
    let name = |k: u32| {
        let file = if k <= 1 {
            format!("{stem}.{extension}")
        } else {
            format!("{stem}-{k}.{extension}")
        };
        base.with_file_name(file)
    };
    // Free means nothing there at all: a link (even one to nowhere) is
    // not a free name to write a take through. Its parts are free too: a
    // failed take's part left behind must not fail every retry after it.
    let free = |p: &PathBuf| {
        [
            p.clone(),
            record::part(p, "video.mp4"),
            record::part(p, "sound.wav"),
        ]
        .iter()
        .all(|q| std::fs::symlink_metadata(q).is_err())
    };
    (n..n + 10_000)
        .map(name)
        .find(free)
        .unwrap_or_else(|| name(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_never_overwrite() {
        let dir = std::env::temp_dir().join(format!("sylva-takes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let base = dir.join("set.mp4");
        assert_eq!(free_name(&base, 1), base);
        std::fs::write(&base, b"").expect("a file");
        assert_eq!(free_name(&base, 1), dir.join("set-2.mp4"));
        // A failed take's part left behind: the retry goes beside it.
        std::fs::write(dir.join("set-2.part.video.mp4"), b"").expect("a part");
        assert_eq!(free_name(&base, 1), dir.join("set-3.mp4"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
