mod fold;
mod gather_prop;
mod prop;
mod segment_prop;
mod segment_vjp;
mod vjp;
