//! `--launcher docker`: containers as the hosts, each reached by its name
//! or id with `docker exec -i` (Podman's `podman exec -i {host}` is the same
//! template, given as one).

use super::{Builtin, Start};

pub(crate) const ROW: Builtin = Builtin {
    name: "docker",
    template: "docker exec -i {host}",
    start: Start::PerHost,
};
