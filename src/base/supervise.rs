//! Supervised threads: a control thread (MIDI, OSC, OSCQuery, the file
//! watcher) whose body panics is reported on screen and in the log and
//! started again after a short pause, so one bad input never leaves the
//! show deaf.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use crate::base::status::ErrorLog;

/// Longest pause between restarts of a thread that keeps panicking.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Spawns `body` on a thread named `name`. When it returns, the thread
/// ends; when it panics, the panic is reported under `name` in `errors`
/// and `body` runs again, after a pause that grows while it keeps failing.
pub fn spawn(
    name: &str,
    errors: ErrorLog,
    mut body: impl FnMut() + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let origin = name.to_string();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let mut backoff = Duration::from_millis(50);
            let mut restarts = 0u64;
            loop {
                match catch_unwind(AssertUnwindSafe(&mut body)) {
                    Ok(()) => return,
                    Err(panic) => {
                        restarts += 1;
                        let what = panic_message(panic.as_ref());
                        errors.report(
                            origin.clone(),
                            format!("thread panicked ({what}); restarted ({restarts} so far)"),
                        );
                        std::thread::sleep(backoff);
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                    }
                }
            }
        })
}

/// The text a panic carried, if it was a string.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn a_panicking_body_is_reported_and_restarted() {
        let errors = ErrorLog::default();
        let runs = Arc::new(AtomicU32::new(0));
        let counted = runs.clone();
        let thread = spawn("test-thread", errors.clone(), move || {
            if counted.fetch_add(1, Ordering::SeqCst) < 2 {
                panic!("bad input");
            }
        })
        .expect("spawn");
        thread.join().expect("the supervisor itself never panics");
        assert_eq!(runs.load(Ordering::SeqCst), 3);
        let shown = errors.snapshot();
        assert_eq!(shown.len(), 1);
        assert!(
            shown[0].message.contains("bad input"),
            "{}",
            shown[0].message
        );
        assert!(
            shown[0].message.contains("2 so far"),
            "{}",
            shown[0].message
        );
    }
}
