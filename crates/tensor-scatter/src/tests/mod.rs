mod prop;
