/// The built-in middleware and the modifiers of side effects.
///
/// `Middlewares` is a namespace: each operator is a static function in its own file.
public enum Middlewares {}
