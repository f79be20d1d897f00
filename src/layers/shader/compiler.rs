//! A shader layer's compiles off the frame thread. Reading a file,
//! translating GLSL, validating, decoding the pictures an ISF file
//! imports: this took 1.5 s for an 8192² picture, and switching between
//! shaders 30 times a second halved the frame rate, while the last good
//! shader could have played on. A layer hands its file to a [`Compiler`];
//! one worker thread at a time takes the newest request (a request made
//! while it works replaces the one waiting, so the queue is one deep: the
//! last request wins), and the frame collects the result once it is ready
//! and still the newest, then builds the pipelines itself, since only the
//! frame thread touches the GPU. The worker ends when nothing waits.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard};

/// What a request came back as: its number and file, and the work's
/// result.
pub struct Finished<T> {
    /// The file asked for.
    pub file: String,
    /// What the work made of it (none: it panicked).
    pub result: Option<T>,
}

/// The one request waiting and the newest result, shared with the worker.
struct Slots<T> {
    waiting: Option<(u64, String)>,
    finished: Option<(u64, Finished<T>)>,
    working: bool,
    /// The layer is gone: the worker stops after its current file.
    closed: bool,
}

type Work<T> = Arc<dyn Fn(&str) -> T + Send + Sync>;

/// Compiles one layer's files on a worker thread, the newest first.
pub struct Compiler<T: Send + 'static> {
    slots: Arc<Mutex<Slots<T>>>,
    work: Work<T>,
    /// The number of the newest request.
    newest: u64,
    /// What the worker thread is called (the layer's id).
    name: String,
}

impl<T: Send + 'static> Compiler<T> {
    /// A compiler that runs `work` on each file; `name` names its thread.
    pub fn new(name: &str, work: impl Fn(&str) -> T + Send + Sync + 'static) -> Self {
        Self {
            slots: Arc::new(Mutex::new(Slots {
                waiting: None,
                finished: None,
                working: false,
                closed: false,
            })),
            work: Arc::new(work),
            newest: 0,
            name: name.to_string(),
        }
    }

    /// Asks for `file`, instead of whatever waits; starts a worker if none
    /// runs. Where no thread can be started, the work runs here and its
    /// result is ready at once.
    pub fn request(&mut self, file: &str) {
        self.newest += 1;
        let start = {
            let mut slots = lock(&self.slots);
            slots.waiting = Some((self.newest, file.to_string()));
            !std::mem::replace(&mut slots.working, true)
        };
        if !start {
            return;
        }
        let (slots, work) = (self.slots.clone(), self.work.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("{} compile", self.name))
            .spawn(move || work_through(&slots, work.as_ref()));
        if let Err(error) = spawned {
            tracing::warn!("{}: no compile thread ({error}); compiling here", self.name);
            work_through(&self.slots, self.work.as_ref());
        }
    }

    /// The newest request's result, once it is ready; an older one that
    /// finished after a newer request is dropped.
    pub fn poll(&mut self) -> Option<Finished<T>> {
        let mut slots = lock(&self.slots);
        match slots.finished.take() {
            Some((number, finished)) if number == self.newest => Some(finished),
            _ => None,
        }
    }

    /// Whether a request has not come back yet.
    #[cfg(test)]
    fn busy(&self) -> bool {
        let slots = lock(&self.slots);
        slots.working || slots.waiting.is_some() || slots.finished.is_some()
    }
}

impl<T: Send + 'static> Drop for Compiler<T> {
    fn drop(&mut self) {
        let mut slots = lock(&self.slots);
        slots.closed = true;
        slots.waiting = None;
    }
}

/// The slots, even where a worker panicked while holding them (the work
/// itself runs unlocked, so they are never half written).
fn lock<T>(slots: &Mutex<Slots<T>>) -> MutexGuard<'_, Slots<T>> {
    slots
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The worker: takes the waiting request until none waits.
fn work_through<T>(slots: &Mutex<Slots<T>>, work: &(dyn Fn(&str) -> T + Send + Sync)) {
    loop {
        let (number, file) = {
            let mut guard = lock(slots);
            match guard.waiting.take() {
                Some(request) if !guard.closed => request,
                _ => {
                    guard.working = false;
                    return;
                }
            }
        };
        // A panic is this file's failure, never the end of the worker
        // (which would leave `working` set and the layer waiting for ever).
        let result = catch_unwind(AssertUnwindSafe(|| work(&file))).ok();
        let mut guard = lock(slots);
        guard.finished = Some((number, Finished { file, result }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    fn wait_for<T: Send>(compiler: &mut Compiler<T>) -> Finished<T> {
        let started = Instant::now();
        loop {
            if let Some(finished) = compiler.poll() {
                return finished;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "no result");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn the_last_request_wins_and_the_queue_stays_one_deep() {
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        let mut compiler = Compiler::new("test", move |file: &str| {
            counted.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(30));
            file.to_uppercase()
        });
        for i in 0..30 {
            compiler.request(&format!("file{i}"));
        }
        let finished = wait_for(&mut compiler);
        assert_eq!(
            (finished.file.as_str(), finished.result.as_deref()),
            ("file29", Some("FILE29"))
        );
        // The first, already under way, and the last; none between.
        assert!(runs.load(Ordering::SeqCst) <= 2, "{runs:?} runs");
        assert!(compiler.poll().is_none(), "taken once");
        let started = Instant::now();
        while compiler.busy() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the worker ends"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        compiler.request("again");
        assert_eq!(wait_for(&mut compiler).result.as_deref(), Some("AGAIN"));
    }

    #[test]
    fn a_panic_fails_its_file_and_the_worker_goes_on() {
        let mut compiler = Compiler::new("test", |file: &str| {
            assert!(file != "bad", "the work fails on {file}");
            file.len()
        });
        compiler.request("bad");
        assert_eq!(wait_for(&mut compiler).result, None);
        compiler.request("good");
        assert_eq!(wait_for(&mut compiler).result, Some(4));
    }

    #[test]
    fn a_result_that_a_newer_request_overtook_is_dropped() {
        let mut compiler = Compiler::new("test", |file: &str| file.len());
        compiler.request("old");
        let started = Instant::now();
        while lock(&compiler.slots).finished.is_none() {
            assert!(started.elapsed() < Duration::from_secs(10));
            std::thread::sleep(Duration::from_millis(2));
        }
        compiler.newest += 1;
        assert!(compiler.poll().is_none(), "stale");
    }
}
