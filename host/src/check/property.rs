//! A property's outcome, and the set a check runs: every property of the
//! kind, or only the one `--only` names, so a pasted replay line runs the
//! property that failed and nothing else.

/// One property's outcome.
#[derive(Debug, Clone)]
pub struct Property {
    /// Its name.
    pub name: &'static str,
    /// `None` when it held; otherwise what went wrong, the seed, and the
    /// shrunk case.
    pub failure: Option<String>,
    /// What was exercised.
    pub detail: String,
}

impl Property {
    pub(crate) fn pass(name: &'static str, detail: impl Into<String>) -> Self {
        Property { name, failure: None, detail: detail.into() }
    }

    pub(crate) fn fail(name: &'static str, failure: impl Into<String>) -> Self {
        Property { name, failure: Some(failure.into()), detail: String::new() }
    }

    pub(crate) fn of(name: &'static str, result: Result<String, String>) -> Self {
        match result {
            Ok(detail) => Property::pass(name, detail),
            Err(failure) => Property::fail(name, failure),
        }
    }
}

/// The properties a check ran, and the names of every one it offered.
#[derive(Debug, Clone, Default)]
pub struct Properties {
    /// The one property to run, if not all.
    only: Option<String>,
    /// Every property's name, in order, run or not.
    pub(crate) offered: Vec<&'static str>,
    /// Those that ran, in order.
    pub(crate) ran: Vec<Property>,
}

impl Properties {
    /// Every property, or only the one named.
    pub(crate) fn new(only: Option<&str>) -> Self {
        Properties { only: only.map(str::to_string), ..Properties::default() }
    }

    /// A property that stops the check before any other is offered (the
    /// plugin could not be created): it runs whatever `--only` says.
    pub(crate) fn stopped(mut self, property: Property) -> Self {
        self.offered.push(property.name);
        self.ran.push(property);
        self
    }

    /// Offers the property `name`; runs `property` unless another was
    /// asked for.
    pub(crate) fn run(&mut self, name: &'static str, property: impl FnOnce() -> Property) {
        self.offered.push(name);
        if self.only.as_deref().is_none_or(|only| only == name) {
            let p = property();
            debug_assert_eq!(p.name, name, "a property runs under its own name");
            self.ran.push(p);
        }
    }

    /// `run` for a property that is its result.
    pub(crate) fn holds(&mut self, name: &'static str, result: impl FnOnce() -> Result<String, String>) {
        self.run(name, || Property::of(name, result()));
    }

    /// `run` for a property that may not apply (`None`): offered only
    /// where it ran and applied.
    pub(crate) fn maybe(&mut self, name: &'static str, property: impl FnOnce() -> Option<Property>) {
        if self.only.as_deref().is_none_or(|only| only == name)
            && let Some(p) = property()
        {
            self.offered.push(name);
            self.ran.push(p);
        }
    }
}
