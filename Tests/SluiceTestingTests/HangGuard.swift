/// How long a test waits for async work that should end at once before it fails: a hang guard, not a pause.
///
/// `receive(_:timeout:)` and `finish(timeout:)` return as soon as the work is done, so this bound costs nothing when
/// the code works; it only decides how long a regression takes to fail. It leaves room for a slow, loaded 2-core
/// machine under the thread sanitizer.
let hangGuard: Duration = .seconds(30)
