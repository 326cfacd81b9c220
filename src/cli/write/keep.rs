//! What a rewritten file keeps of the one it replaces: owner and group, permissions, and every
//! extended attribute kinject can read (`user.*`, `security.*` such as SELinux labels, POSIX
//! ACLs in `system.posix_acl_access`). What cannot be kept is an error: the file is then not
//! replaced, rather than replaced by one that others can no longer read, or more can.

use std::fs;
use std::io;
use std::path::Path;

/// Gives `new` the owner, group, permissions and extended attributes of `original` (of
/// metadata `meta`).
pub(super) fn keep(original: &Path, meta: &fs::Metadata, new: &fs::File) -> io::Result<()> {
    // Owner first: a change of owner clears the set-user-ID and set-group-ID bits.
    owner(meta, new)?;
    new.set_permissions(meta.permissions())?;
    attributes(original, new)
}

#[cfg(unix)]
fn owner(meta: &fs::Metadata, new: &fs::File) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let made = new.metadata()?;
    if (made.uid(), made.gid()) == (meta.uid(), meta.gid()) {
        return Ok(());
    }
    std::os::unix::fs::fchown(new, Some(meta.uid()), Some(meta.gid())).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "it belongs to uid {}, gid {}, and a file kinject makes cannot be given to them ({e})",
                meta.uid(),
                meta.gid()
            ),
        )
    })
}

#[cfg(not(unix))]
fn owner(_: &fs::Metadata, _: &fs::File) -> io::Result<()> {
    Ok(())
}

/// Makes the extended attributes of `new` those of `original`: each set where it differs,
/// and those `original` has not (a default ACL of the directory, inherited) removed.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn attributes(original: &Path, new: &fs::File) -> io::Result<()> {
    use rustix::fs as x;
    let want = xattrs(Access {
        list_size: &|| x::llistxattr_query(original),
        list: &|buf| x::llistxattr(original, buf),
        size: &|name| x::lgetxattr_query(original, name),
        get: &|name, buf| x::lgetxattr(original, name, buf),
    })?;
    let have = xattrs(Access {
        list_size: &|| x::flistxattr_query(new),
        list: &|buf| x::flistxattr(new, buf),
        size: &|name| x::fgetxattr_query(new, name),
        get: &|name, buf| x::fgetxattr(new, name, buf),
    })?;
    let failed = |name: &CStr, e: rustix::io::Errno| {
        let e = io::Error::from(e);
        io::Error::new(
            e.kind(),
            format!(
                "its extended attribute {} cannot be kept ({e})",
                name.to_string_lossy()
            ),
        )
    };
    for (name, value) in &want {
        if have.get(name) != Some(value) {
            x::fsetxattr(new, name.as_c_str(), value, x::XattrFlags::empty())
                .map_err(|e| failed(name, e))?;
        }
    }
    for name in have.keys().filter(|n| !want.contains_key(*n)) {
        x::fremovexattr(new, name.as_c_str()).map_err(|e| failed(name, e))?;
    }
    Ok(())
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn attributes(_: &Path, _: &fs::File) -> io::Result<()> {
    Ok(())
}

#[cfg(any(target_os = "linux", target_os = "android"))]
use std::ffi::CStr;

#[cfg(any(target_os = "linux", target_os = "android"))]
type Xattrs = std::collections::BTreeMap<std::ffi::CString, Vec<u8>>;

/// How the extended attributes of one file are read: the size of the list of names, the list,
/// the size of a value, a value.
#[cfg(any(target_os = "linux", target_os = "android"))]
struct Access<'a> {
    list_size: &'a dyn Fn() -> rustix::io::Result<usize>,
    list: &'a dyn Fn(&mut [u8]) -> rustix::io::Result<usize>,
    size: &'a dyn Fn(&CStr) -> rustix::io::Result<usize>,
    get: &'a dyn Fn(&CStr, &mut [u8]) -> rustix::io::Result<usize>,
}

/// Every extended attribute of a file, with its value. A file system without extended
/// attributes has none.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn xattrs(access: Access<'_>) -> io::Result<Xattrs> {
    use rustix::io::Errno;
    let names = match sized(access.list_size, access.list) {
        Err(e) if e == Errno::NOTSUP || e == Errno::OPNOTSUPP => return Ok(Xattrs::new()),
        other => other?,
    };
    let mut out = Xattrs::new();
    for name in names.split_inclusive(|&b| b == 0) {
        let Ok(name) = CStr::from_bytes_with_nul(name) else {
            continue;
        };
        match sized(&|| (access.size)(name), &|buf| (access.get)(name, buf)) {
            Ok(value) => {
                out.insert(name.to_owned(), value);
            }
            // Removed since it was listed.
            Err(Errno::NODATA) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}

/// What `read` gives, in a buffer of the size `size` says (asked again if it grew meanwhile).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn sized(
    size: &dyn Fn() -> rustix::io::Result<usize>,
    read: &dyn Fn(&mut [u8]) -> rustix::io::Result<usize>,
) -> rustix::io::Result<Vec<u8>> {
    loop {
        let n = size()?;
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut buf = vec![0; n];
        match read(&mut buf) {
            Ok(n) => {
                buf.truncate(n);
                return Ok(buf);
            }
            Err(rustix::io::Errno::RANGE) => continue,
            Err(e) => return Err(e),
        }
    }
}
