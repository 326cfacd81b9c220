//! The Go types of struct fields, as far as their JSON goes: what `fields` describes Go's
//! structs with.

/// The Go type of a field, as far as its JSON goes.
#[derive(Clone, Copy)]
pub(crate) enum Ty {
    String,
    Int,
    Bool,
    /// `resource.Quantity`: its canonical string.
    Quantity,
    /// `intstr.IntOrString`: a number or a string.
    IntOrString,
    Struct(&'static [Field]),
    Pointer(&'static Ty),
    Slice(&'static Ty),
    /// A map with string keys (written sorted).
    Map(&'static Ty),
}

/// One field of a Go struct.
pub(crate) struct Field {
    /// Its JSON name (empty for an embedded struct).
    pub(crate) json: &'static str,
    pub(crate) omit_empty: bool,
    /// An embedded struct, whose fields are written as this struct's own.
    pub(crate) inline: bool,
    pub(crate) ty: Ty,
}
