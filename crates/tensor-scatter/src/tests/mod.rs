mod gather_prop;
mod prop;
