start();   
finish();
