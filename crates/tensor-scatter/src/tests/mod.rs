mod fold;
mod gather_prop;
mod prop;
