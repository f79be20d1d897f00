//! Work that must not hold up the frame, on a worker thread where the
//! newest request wins. Reading and translating a shader file with the
//! pictures it imports took 1.5 s for an 8192² picture; a 64 MiB point
//! cloud takes longer; switching shaders 30 times a second halved the
//! frame rate. A [`Latest`] takes requests (a file, a structure); one worker
//! thread at a time takes the newest (a request made while it works
//! replaces the one waiting, so the queue is one deep), and the frame
//! collects the result once it is ready and still the newest, doing
//! itself whatever touches the GPU. The worker ends when nothing waits.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard};

/// What a request came back as: the request, and the work's result.
pub struct Finished<R, T> {
    /// What was asked for.
    pub request: R,
    /// What the work made of it (none: it panicked).
    pub result: Option<T>,
}

/// The one request waiting and the newest result, shared with the worker.
struct Slots<R, T> {
    waiting: Option<(u64, R)>,
    finished: Option<(u64, Finished<R, T>)>,
    working: bool,
    /// The owner is gone: the worker stops after its current request.
    closed: bool,
}

type Work<R, T> = Arc<dyn Fn(&R) -> T + Send + Sync>;

/// Runs one kind of work on a worker thread, the newest request first.
pub struct Latest<R: Send + 'static, T: Send + 'static> {
    slots: Arc<Mutex<Slots<R, T>>>,
    work: Work<R, T>,
    /// The number of the newest request.
    newest: u64,
    /// The number of the newest request whose result was collected.
    collected: u64,
    /// What the worker thread is called (its owner and work).
    name: String,
}

impl<R: Send + 'static, T: Send + 'static> Latest<R, T> {
    /// A worker that runs `work` on each request; `name` names its
    /// thread.
    pub fn new(name: &str, work: impl Fn(&R) -> T + Send + Sync + 'static) -> Self {
        Self {
            slots: Arc::new(Mutex::new(Slots {
                waiting: None,
                finished: None,
                working: false,
                closed: false,
            })),
            work: Arc::new(work),
            newest: 0,
            collected: 0,
            name: name.to_string(),
        }
    }

    /// Asks for `request`, instead of whatever waits; starts a worker if
    /// none runs. Where no thread can be started, the work runs here and
    /// its result is ready at once.
    pub fn request(&mut self, request: R) {
        self.newest += 1;
        let start = {
            let mut slots = lock(&self.slots);
            slots.waiting = Some((self.newest, request));
            !std::mem::replace(&mut slots.working, true)
        };
        if !start {
            return;
        }
        let (slots, work) = (self.slots.clone(), self.work.clone());
        let spawned = std::thread::Builder::new()
            .name(self.name.clone())
            .spawn(move || work_through(&slots, work.as_ref()));
        if let Err(error) = spawned {
            tracing::warn!("{}: no worker thread ({error}); working here", self.name);
            work_through(&self.slots, self.work.as_ref());
        }
    }

    /// The newest request's result, once it is ready; an older one that
    /// finished after a newer request is dropped.
    pub fn poll(&mut self) -> Option<Finished<R, T>> {
        let mut slots = lock(&self.slots);
        match slots.finished.take() {
            Some((number, finished)) if number == self.newest => {
                self.collected = number;
                Some(finished)
            }
            _ => None,
        }
    }

    /// Whether the newest request's result has yet to be collected.
    pub fn pending(&self) -> bool {
        self.collected != self.newest
    }

    /// Whether a request has not come back yet.
    #[cfg(test)]
    fn busy(&self) -> bool {
        let slots = lock(&self.slots);
        slots.working || slots.waiting.is_some() || slots.finished.is_some()
    }
}

impl<R: Send + 'static, T: Send + 'static> Drop for Latest<R, T> {
    fn drop(&mut self) {
        let mut slots = lock(&self.slots);
        slots.closed = true;
        slots.waiting = None;
    }
}

/// The slots, even where a worker panicked while holding them (the work
/// itself runs unlocked, so they are never half written).
fn lock<R, T>(slots: &Mutex<Slots<R, T>>) -> MutexGuard<'_, Slots<R, T>> {
    slots
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The worker: takes the waiting request until none waits.
fn work_through<R, T>(slots: &Mutex<Slots<R, T>>, work: &(dyn Fn(&R) -> T + Send + Sync)) {
    loop {
        let (number, request) = {
            let mut guard = lock(slots);
            match guard.waiting.take() {
                Some(request) if !guard.closed => request,
                _ => {
                    guard.working = false;
                    return;
                }
            }
        };
        // A panic is this request's failure, never the end of the worker
        // (which would leave `working` set and the owner waiting for ever).
        let result = catch_unwind(AssertUnwindSafe(|| work(&request))).ok();
        let mut guard = lock(slots);
        guard.finished = Some((number, Finished { request, result }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    fn wait_for<T: Send>(latest: &mut Latest<String, T>) -> Finished<String, T> {
        let started = Instant::now();
        loop {
            if let Some(finished) = latest.poll() {
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
        let mut latest = Latest::new("test", move |file: &String| {
            counted.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(30));
            file.to_uppercase()
        });
        for i in 0..30 {
            latest.request(format!("file{i}"));
        }
        assert!(latest.pending());
        let finished = wait_for(&mut latest);
        assert!(!latest.pending(), "collected");
        assert_eq!(
            (finished.request.as_str(), finished.result.as_deref()),
            ("file29", Some("FILE29"))
        );
        // The first, already under way, and the last; none between.
        assert!(runs.load(Ordering::SeqCst) <= 2, "{runs:?} runs");
        assert!(latest.poll().is_none(), "taken once");
        let started = Instant::now();
        while latest.busy() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the worker ends"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        latest.request("again".into());
        assert_eq!(wait_for(&mut latest).result.as_deref(), Some("AGAIN"));
    }

    #[test]
    fn a_panic_fails_its_file_and_the_worker_goes_on() {
        let mut latest = Latest::new("test", |file: &String| {
            assert!(file != "bad", "the work fails on {file}");
            file.len()
        });
        latest.request("bad".into());
        assert_eq!(wait_for(&mut latest).result, None);
        latest.request("good".into());
        assert_eq!(wait_for(&mut latest).result, Some(4));
    }

    #[test]
    fn a_result_that_a_newer_request_overtook_is_dropped() {
        let mut latest = Latest::new("test", |file: &String| file.len());
        latest.request("old".into());
        let started = Instant::now();
        while lock(&latest.slots).finished.is_none() {
            assert!(started.elapsed() < Duration::from_secs(10));
            std::thread::sleep(Duration::from_millis(2));
        }
        latest.newest += 1;
        assert!(latest.poll().is_none(), "stale");
    }
}
